import { builtinModules } from 'node:module';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { build, type Metafile } from 'esbuild';
import { buildDashboard } from '../services/dashboard/build.ts';
import { PLATFORM_SERVICES } from './services.ts';

/**
 * The bundles a container runs: each service's main.ts (the services of scripts/services.ts) with its workspace
 * code in <out>/<service>/main.js, run with plain `node` (no TypeScript loader in the process: less memory, faster
 * start), and likewise the operator's two commands, <out>/migrate/main.js (`npm run migrate`) and
 * <out>/admin/main.js (`npm run admin`). npm packages stay external and come from node_modules; the ones the
 * bundles import are listed in <out>/packages.json, which scripts/image-layout.ts reads to copy exactly those into
 * the image. Migrations are copied to <out>/migrations, where the bundled migrator looks for them
 * (`../migrations/` from <out>/<name>/). The merchant dashboard's static assets (services/dashboard, a Vite build)
 * go to <out>/dashboard, where the gateway's bundle serves them from.
 */
const ROOT = new URL('..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { dependencies: Record<string, string> };
const external = Object.keys(pkg.dependencies).flatMap((name) => [name, `${name}/*`]);

/** Bundles every service and the two operator commands into `out` (emptied first); answers what it wrote. */
export async function buildBundles(out: string): Promise<{ entries: string[]; packages: string[] }> {
  const entries: Record<string, string> = {
    ...Object.fromEntries(PLATFORM_SERVICES.map((service) => [service.name, `${ROOT}${service.entry}`])),
    migrate: `${ROOT}scripts/migrate.ts`,
    admin: `${ROOT}scripts/admin.ts`,
  };
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const dashboard = buildDashboard(`${out}/dashboard`);
  const metafiles = await Promise.all(
    Object.entries(entries).map(async ([name, entry]) => {
      const result = await build({
        entryPoints: [entry],
        outfile: `${out}/${name}/main.js`,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node24',
        external,
        sourcemap: true,
        metafile: true,
        logLevel: 'warning',
        // Bundled CommonJS helpers may call require(); give the ESM bundle one.
        banner: {
          js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
        },
      });
      return result.metafile;
    }),
  );
  await dashboard;
  cpSync(`${ROOT}shared/migrations`, `${out}/migrations`, { recursive: true });
  const packages = importedPackages(metafiles);
  writeFileSync(`${out}/packages.json`, JSON.stringify(packages, null, 2) + '\n');
  return { entries: Object.keys(entries), packages };
}

/** The npm packages the bundles import at run time (their external imports less Node's built-in modules). */
function importedPackages(metas: Metafile[]): string[] {
  const builtins = new Set(builtinModules);
  const names = new Set<string>();
  for (const meta of metas) {
    for (const output of Object.values(meta.outputs)) {
      for (const imported of output.imports) {
        if (!imported.external || imported.path.startsWith('node:') || builtins.has(imported.path)) continue;
        const parts = imported.path.split('/');
        names.add(imported.path.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!);
      }
    }
  }
  return [...names].sort();
}
