import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';

/**
 * `npm run lint`: the hygiene gate, in turn - typescript-eslint (type-aware rules, and the boundaries between
 * services, shared/ and the dashboard: eslint.config.js), Prettier (formatting, .prettierrc.json), knip (unused
 * files, exports and dependencies, knip.json), dpdm (import circles, type-only imports included) and the service
 * skeleton and the test files' names (below). `npm run lint -- --fix` lets the first three fix what they can: eslint's fixes, Prettier's
 * formatting, and knip removing `export` from what nothing imports. Every step runs even after one fails, so one
 * run lists everything.
 */
const fix = process.argv.includes('--fix');

/**
 * Where dpdm looks for circles. A circle of type-only imports breaks nothing at run time, but it ties the modules
 * into one knot all the same: the type belongs where neither side has to import the other for it.
 */
const CYCLE_SOURCES = [
  'shared/src/**/*.ts',
  'services/*/src/**/*.{ts,tsx}',
  'services/*/*.ts',
  'scripts/**/*.ts',
  'test/**/*.ts',
  'bench/**/*.ts',
];

const steps: { name: string; args: string[]; quiet?: boolean }[] = [
  { name: 'eslint', args: ['eslint', ...(fix ? ['--fix'] : []), '.'] },
  { name: 'prettier', args: ['prettier', fix ? '--write' : '--check', '--log-level', 'warn', '.'] },
  { name: 'knip', args: ['knip', ...(fix ? ['--fix', '--fix-type', 'exports,types'] : [])] },
  {
    name: 'dpdm',
    args: ['dpdm', '--no-tree', '--no-warning', '--no-progress', '--exit-code', 'circular:1', ...CYCLE_SOURCES],
    quiet: true,
  },
];

/** The folders of a service's src/: its operations (a file each), its queries, and its domain rules. */
const FOLDERS = ['operations', 'queries', 'domain'];
/** What every service but the dashboard has in src/ (docs/CONTRIBUTING.md, "A service's skeleton"). */
const REQUIRED = ['main.ts', 'config.ts', 'deps.ts', 'service.ts', 'operations/', 'queries/'];

/**
 * Where a service still differs from the skeleton, by name: each entry must still be true (a gap closed fails the
 * lint until its entry goes), so the list only shrinks. The gateway is the HTTP edge: its routes forward to the
 * services' operations, and each of its surfaces (docs/CONTRIBUTING.md) is a folder of its own.
 */
const KNOWN_GAPS: Record<string, string[]> = {
  gateway: [
    'has no src/deps.ts',
    'has no src/operations/',
    'has no src/queries/',
    'has src/api-v1/',
    'has src/dashboard/',
    'has src/idempotency/',
    'has src/onboarding/',
    'has src/openapi/',
    'has src/pages/',
    'has src/portal/',
    'has src/programme/',
    'has src/reference/',
    'has src/v1/',
  ],
};

/** How a service's src/ differs from the skeleton. */
function skeletonGaps(service: string): string[] {
  const src = `services/${service}/src`;
  const gaps = REQUIRED.filter((entry) => !existsSync(`${src}/${entry}`)).map((entry) => `has no src/${entry}`);
  for (const entry of existsSync(src) ? readdirSync(src) : []) {
    const folder = statSync(`${src}/${entry}`).isDirectory();
    if (folder ? !FOLDERS.includes(entry) : /(^|-)rules\.ts$/.test(entry))
      gaps.push(`has src/${entry}${folder ? '/' : ''}`);
  }
  return gaps;
}

/** What to do about a gap. */
const remedy = (gap: string) =>
  gap.startsWith('has no ')
    ? 'every service has it'
    : gap.endsWith('/')
      ? `src/ has no folders but ${FOLDERS.map((f) => `${f}/`).join(', ')}: domain rules go in src/domain/`
      : 'domain rules go in src/domain/';

/** Every service but the dashboard (a browser app the gateway serves) against the skeleton; answers the problems. */
function checkSkeleton(): string[] {
  const services = readdirSync('services').filter(
    (name) => name !== 'dashboard' && statSync(`services/${name}`).isDirectory(),
  );
  const problems: string[] = [];
  for (const service of services) {
    const gaps = skeletonGaps(service);
    const known = KNOWN_GAPS[service] ?? [];
    for (const gap of gaps.filter((g) => !known.includes(g)))
      problems.push(`services/${service} ${gap}: ${remedy(gap)}`);
    for (const gap of known.filter((g) => !gaps.includes(g)))
      problems.push(`services/${service} no longer "${gap}": drop it from KNOWN_GAPS`);
  }
  for (const service of Object.keys(KNOWN_GAPS).filter((name) => !services.includes(name)))
    problems.push(`KNOWN_GAPS names ${service}, which is not a service: drop it`);
  return problems;
}

/** Test files say what they show: the happy path, errors (bad input, faults, races) or security (isolation, secrets). */
function checkTestNames(): string[] {
  if (!existsSync('test')) return [];
  return readdirSync('test', { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts') && !/(^|[./])(happy|errors|security)\.test\.ts$/.test(file))
    .map((file) => `test/${file}: name it <what>.happy|errors|security.test.ts`);
}

const failed: string[] = [];
for (const step of steps) {
  const run = spawnSync('npx', ['--no-install', ...step.args], {
    stdio: step.quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    encoding: 'utf8',
    env: { ...process.env, ...(step.quiet ? { FORCE_COLOR: '0' } : {}) },
  });
  if (run.status !== 0) {
    // A quiet step says nothing when it passes, and everything it said when it fails.
    if (step.quiet) process.stdout.write(`${run.stdout ?? ''}${run.stderr ?? ''}`);
    failed.push(step.name);
  }
}
const skeleton = checkSkeleton();
if (skeleton.length > 0) {
  process.stdout.write(`Service skeleton (docs/CONTRIBUTING.md):\n${skeleton.map((p) => `  ${p}\n`).join('')}`);
  failed.push('skeleton');
}

const testNames = checkTestNames();
if (testNames.length > 0) {
  process.stdout.write(`Test file names:\n${testNames.map((p) => `  ${p}\n`).join('')}`);
  failed.push('test names');
}

if (failed.length > 0) {
  process.stderr.write(
    `lint: ${failed.join(', ')} failed${fix ? '' : ' (`npm run lint -- --fix` fixes what it can)'}\n`,
  );
  process.exit(1);
}
process.stderr.write('lint: eslint, prettier, knip, dpdm, skeleton and test names passed\n');
