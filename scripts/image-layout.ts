import { chmodSync, cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { buildBundles } from './bundle.ts';

/**
 * `npm run image:layout -- <dir>`: lays out the container image's /app folder in <dir>: the bundles of
 * scripts/bundle.ts in dist/, a package.json, and in node_modules/ the npm packages the bundles import with all that
 * they depend on, copied from this checkout's node_modules. Production code only: no dev tools, no TypeScript loader,
 * no embedded Postgres. deploy/docker/Dockerfile runs this in its build stage and copies <dir> to /app as it is; the
 * tests run it too, so the processes they start are exactly what the image holds.
 */
const ROOT = resolve(new URL('..', import.meta.url).pathname);

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}
const readManifest = (dir: string) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

/** Node's lookup: `name` from the package in `from`, in the nearest node_modules up to the checkout's root. */
function lookup(from: string, name: string): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === ROOT || dir === dirname(dir)) return null;
  }
}

const sameFile = (a: string, b: string) => existsSync(b) && readFileSync(a).equals(readFileSync(b));

/** Every package folder the named packages need at run time: dependencies, and optional or peer ones installed. */
function packageClosure(names: string[]): string[] {
  const found = new Set<string>();
  const visit = (from: string, name: string, required: boolean) => {
    const dir = lookup(from, name);
    if (!dir) {
      if (required)
        throw new Error(`image-layout: ${name} (needed from ${relative(ROOT, from) || '.'}) is not installed`);
      return;
    }
    if (found.has(dir)) return;
    found.add(dir);
    const manifest = readManifest(dir);
    for (const dep of Object.keys(manifest.dependencies ?? {})) visit(dir, dep, true);
    for (const dep of Object.keys({ ...manifest.optionalDependencies, ...manifest.peerDependencies }))
      visit(dir, dep, false);
  };
  for (const name of names) visit(ROOT, name, true);
  return [...found].sort();
}

/**
 * Lays out /app in `out`. Into a folder laid out before (Tilt's, on every change) a package already there at the
 * same version is left as it is, so that only the bundles change and a file watcher sees nothing else.
 */
export async function layOutImage(out: string): Promise<{ packages: string[] }> {
  const target = resolve(out);
  const { packages } = await buildBundles(join(target, 'dist'));
  const closure = packageClosure(packages);
  for (const dir of closure) {
    const copy = join(target, relative(ROOT, dir));
    if (sameFile(join(dir, 'package.json'), join(copy, 'package.json'))) continue;
    // A package's own node_modules holds versions nested for it; those it needs are copied on their own.
    const nested = join(dir, 'node_modules');
    cpSync(dir, copy, { recursive: true, filter: (source) => source !== nested });
  }
  const root = readManifest(ROOT) as Manifest & { engines: Record<string, string> };
  const dependencies = Object.fromEntries(packages.map((name) => [name, readManifest(lookup(ROOT, name)!).version]));
  const manifest = {
    name: root.name,
    version: root.version ?? '0.0.0',
    private: true,
    type: 'module',
    engines: root.engines,
    dependencies,
  };
  const manifestText = JSON.stringify(manifest, null, 2) + '\n';
  if (
    !existsSync(join(target, 'package.json')) ||
    readFileSync(join(target, 'package.json'), 'utf8') !== manifestText
  ) {
    writeFileSync(join(target, 'package.json'), manifestText);
  }
  // Readable and traversable by the image's unprivileged user, writable by nobody but root.
  chmodSync(target, 0o755);
  return { packages: closure.map((dir) => relative(ROOT, dir)) };
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const out = process.argv[2];
  if (!out) {
    process.stderr.write('usage: npm run image:layout -- <dir>\n');
    process.exit(2);
  }
  const { packages } = await layOutImage(out);
  process.stderr.write(`image-layout: ${out}: dist/ and ${packages.length} packages in node_modules/\n`);
}
