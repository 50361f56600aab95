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
/** What every service but the dashboard and the edge has in src/ (docs/CONTRIBUTING.md, "A service's skeleton"). */
const REQUIRED = ['main.ts', 'config.ts', 'deps.ts', 'service.ts', 'operations/', 'queries/'];

/**
 * The HTTP edge, the one service of a skeleton of its own (docs/CONTRIBUTING.md, "The edge's skeleton"): it runs no
 * operations but forwards to the services'. Its src/ holds EDGE_REQUIRED and nothing else: the process's files,
 * `http/` (the plumbing its surfaces share) and `surfaces/`, one folder a surface, each with its router module
 * (SURFACE_REQUIRED) and no folder but SURFACE_FOLDERS, where its SQL goes.
 */
const EDGE = 'gateway';
const EDGE_REQUIRED = ['main.ts', 'config.ts', 'service.ts', 'app.ts', 'http/', 'surfaces/'];
const SURFACE_REQUIRED = ['router.ts'];
const SURFACE_FOLDERS = ['queries'];

/** The entries of services/<service>/<dir>, a folder's name ending in a slash. */
const entriesOf = (service: string, dir: string) => {
  const path = `services/${service}/${dir}`;
  if (!existsSync(path)) return [];
  return readdirSync(path).map((name) => (statSync(`${path}/${name}`).isDirectory() ? `${name}/` : name));
};
/** The gaps "has no <dir>/<entry>" of what `required` names and services/<service>/<dir> lacks. */
const lacking = (service: string, dir: string, required: string[]) =>
  required
    .filter((entry) => !existsSync(`services/${service}/${dir}/${entry}`))
    .map((entry) => `has no ${dir}/${entry}`);

/** How a service's src/ differs from the skeleton, each gap with its remedy. */
function serviceGaps(service: string): string[] {
  const gaps = lacking(service, 'src', REQUIRED).map((gap) => `${gap}: every service has it`);
  for (const entry of entriesOf(service, 'src')) {
    if (entry.endsWith('/') && !FOLDERS.includes(entry.slice(0, -1)))
      gaps.push(
        `has src/${entry}: src/ has no folders but ${FOLDERS.map((f) => `${f}/`).join(', ')}: domain rules go in src/domain/`,
      );
    else if (/(^|-)rules\.ts$/.test(entry)) gaps.push(`has src/${entry}: domain rules go in src/domain/`);
  }
  return gaps;
}

/** How the edge's src/ differs from the edge's skeleton, each gap with its remedy. */
function edgeGaps(service: string): string[] {
  const gaps = lacking(service, 'src', EDGE_REQUIRED).map((gap) => `${gap}: the edge has it`);
  for (const entry of entriesOf(service, 'src').filter((e) => !EDGE_REQUIRED.includes(e)))
    gaps.push(
      `has src/${entry}: the edge's src/ has ${EDGE_REQUIRED.join(', ')} and nothing else ` +
        '(shared plumbing goes in http/, what one surface serves in surfaces/<surface>/)',
    );
  for (const surface of entriesOf(service, 'src/surfaces')) {
    const dir = `src/surfaces/${surface}`;
    if (!surface.endsWith('/')) {
      gaps.push(`has ${dir}: a surface is a folder with its router module`);
      continue;
    }
    gaps.push(...lacking(service, dir.slice(0, -1), SURFACE_REQUIRED).map((gap) => `${gap}: every surface has it`));
    for (const entry of entriesOf(service, dir)) {
      if (entry.endsWith('/') && !SURFACE_FOLDERS.includes(entry.slice(0, -1)))
        gaps.push(`has ${dir}${entry}: a surface has no folders but ${SURFACE_FOLDERS.map((f) => `${f}/`).join(', ')}`);
      else if (entry === 'queries.ts') gaps.push(`has ${dir}${entry}: a surface's SQL goes in its queries/`);
    }
  }
  return gaps;
}

/** Every service but the dashboard (a browser app the gateway serves) against its skeleton; answers the problems. */
function checkSkeleton(): string[] {
  const services = readdirSync('services').filter(
    (name) => name !== 'dashboard' && statSync(`services/${name}`).isDirectory(),
  );
  const problems = services.flatMap((service) =>
    (service === EDGE ? edgeGaps(service) : serviceGaps(service)).map((gap) => `services/${service} ${gap}`),
  );
  if (!services.includes(EDGE)) problems.push(`EDGE names ${EDGE}, which is not a service: name the edge`);
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
