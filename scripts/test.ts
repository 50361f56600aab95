import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { recordTestTimes, writeTestBatches } from './test-batches.ts';
import { TapConfig } from '@tapjs/config';
import { signature as builtPlugins } from '@tapjs/test';
import { ensureDashboardBuilt } from '../services/dashboard/build.ts';
import { ensureTemplateDatabase } from '../test/helpers/template-database.ts';
import { ensureInfra } from './infra.ts';

/**
 * `npm test`: type-check, the lint gate (a full run only) and the tap suite against real Postgres and NATS (found or
 * started, see infra.ts). The checks run beside the suite, their output held until it has finished.
 * Each test file creates its own database (a copy of a template migrated once per run) and NATS prefix from
 * TEST_DATABASE_URL, TEST_TEMPLATE_DATABASE and NATS_URL. A full run gives a process to each batch of a folder's
 * files (scripts/test-batches.ts), which runs them one after another; chosen files run a process each.
 * Extra arguments go to tap (`npm test -- test/gateway/auth.test.ts`). `--quick` (`npm run test:quick`) leaves out
 * the browser files, the chart's (helm), the fault-injection ones and the lint gate, for a fast loop while working.
 */
const COMPILE_CACHE = fileURLToPath(new URL('../node_modules/.cache/node-compile-cache', import.meta.url));
/**
 * tap's process recorder (@tapjs/processinfo, loaded into every test process and every Node process one spawns)
 * records each module a process loads, for coverage and `tap --changed`: it reads the file again, measures its
 * lines and parses its source map, on every start. The suite uses neither, and tap has no setting for it, so this
 * preload (NODE_OPTIONS' imports run before tap's) gives the recorder a pattern that excludes every file.
 * tap also turns source maps on in every process (`--enable-source-maps`, and the recorder again when it loads), and
 * Node then parses the map of every dependency it loads that ships one: a good part of a process's start, for stack
 * traces that would point into the packages' TypeScript rather than their JavaScript. The suite's own files need no
 * map (type stripping keeps every position), so the preload turns them off and keeps them off.
 */
const TEST_PROCESS_PRELOAD = `--import=data:text/javascript,${encodeURIComponent(
  "process.env._TAPJS_PROCESSINFO_EXCLUDE_ = '/./'; " +
    'process.setSourceMapsEnabled(false); process.setSourceMapsEnabled = () => {};',
)}`;
const log = (line: string) => process.stderr.write(`test: ${line}\n`);
// The runtime the suite runs on: the `node` package's binary in node_modules/.bin comes first on npm's PATH.
process.stdout.write(`test: node ${process.version}\n`);
const started = Date.now();
const quick = process.argv.includes('--quick');
const files = process.argv.slice(2).filter((arg) => arg !== '--quick');

/**
 * The processes the run started (the checks, tap), each the leader of a process group of its own (spawned
 * `detached`): a signal that stops the run stops each group, down to the test files and their browsers.
 */
const children = new Set<ChildProcess>();
const track = <Child extends ChildProcess>(child: Child): Child => {
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
};

/**
 * A command run beside the suite: its output is kept and printed after tap's, so that the two do not interleave. It
 * runs at the lowest priority (nice 19): it takes the CPU the suite's files leave while they wait on timers, Postgres
 * and NATS, rather than slowing them down.
 */
function background(name: string, args: string[]): Promise<{ name: string; code: number; output: string }> {
  return new Promise((resolve) => {
    const child = track(
      spawn('nice', ['-n', '19', 'npx', ...args], {
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, FORCE_COLOR: '0' },
      }),
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', (err) => resolve({ name, code: 1, output: `${output}${err.message}\n` }));
    child.on('close', (code) => resolve({ name, code: code ?? 1, output }));
  });
}

/**
 * tap's Test class is generated for a set of plugins, and npm installs it for tap's defaults: among them the
 * TypeScript plugin, whose loader compiles every file with ts-node (several times the CPU of Node's own type
 * stripping), and the mock plugin's module hooks, neither of which the suite uses (package.json's `tap.plugin`).
 * tap rebuilds the class when the two differ, but only for its next run: the run that notices still starts every
 * file with the old plugins' loaders. So the class is rebuilt here, before tap starts, whenever they differ.
 */
async function ensureTapBuilt(): Promise<void> {
  // The configuration alone, parsed without this script's arguments (tap's parser refuses `--quick`), and without
  // TapConfig.load()'s colour step, which would set FORCE_COLOR for the tap run below.
  const config = (await new TapConfig().loadPluginConfigFields().loadConfigFile()).parse([]);
  if (config.pluginSignature === builtPlugins) return;
  log("building tap's test class for the configured plugins");
  const build = spawnSync('npx', ['tap', 'build'], { encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`tap build failed:\n${build.stdout}${build.stderr}`);
}

await ensureTapBuilt();
// The dashboard's typed client is generated by its build, so the build (when its sources changed) comes first.
await ensureDashboardBuilt(log);
const checks = [
  background('type check (tsconfig.json)', ['tsc', '-p', 'tsconfig.json']),
  background('type check (services/dashboard/tsconfig.json)', ['tsc', '-p', 'services/dashboard/tsconfig.json']),
];
// The lint gate checks the whole tree, so a run of chosen files (`npm test -- <files>`) leaves it to `npm run lint`,
// and so does the quick run, the loop while working: a full run (and CI) has it.
if (files.length === 0 && !quick) checks.push(background('lint', ['node', 'scripts/lint.ts']));

// Stopped (Ctrl-C, a CI's timeout), the run still stops what it started (its Postgres, a nats-server child), once it
// has finished starting them.
const starting = ensureInfra({ purpose: 'test', log });
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const)
  process.on(signal, () => {
    for (const child of children) {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // The group has ended meanwhile.
      }
    }
    void starting.then((started) => started.stop()).finally(() => process.exit(code));
  });
const infra = await starting;
log(infra.describe.join('; '));
const template = await ensureTemplateDatabase(infra.adminUrl);
// A full run takes the fault-injection tests (test/resilience) first, by themselves: they cut Postgres and NATS
// (through proxies and servers of their own) and time the recovery, which a machine busy with the other files'
// stacks stretches past their bounds. Three at a time, as the rest: they spend most of their time waiting for a
// recovery and leave the cores half idle, which the checks (at the lowest priority) take meanwhile.
const RESILIENCE = 'test/resilience/**';
const QUICK_EXCLUDES = ['**/*.browser.*test.ts', 'test/deploy/{chart,tiltfile}*.test.ts'];
const runs =
  files.length > 0
    ? [files]
    : [
        ...(quick ? [] : [['--jobs=3', RESILIENCE]]),
        // Three processes at a time on two cores: a file spends much of its time waiting on Postgres, NATS and its
        // services' timers, and each keeps a few Postgres connections. Each process runs a batch of one folder's
        // files (test/helpers/batch.ts).
        ['--jobs=3', ...writeTestBatches({ exclude: [RESILIENCE, ...(quick ? QUICK_EXCLUDES : [])] })],
      ];
// Pass tap's output through, remember its summary ("# { total: 12, pass: 11, fail: 1 }") and every failure with
// the subtests it sits in and its diagnostics, so that the end of a long CI log says what failed.
let summary = '';
let pending = '';
const subtests: string[] = [];
const failures: string[][] = [];
let diagnostics: { lines: string[]; indent: string } | undefined;
/** Each file's wall time, from tap's top-level result lines, for the slowest-files list at the end. */
const fileTimes: [string, number][] = [];
const readLine = (line: string) => {
  // A file alone is a top-level result; a file of a batch is one level down.
  const file = /^(?: {4})?(?:not )?ok \d+ - (test\/\S+\.test\.ts) # time=([\d.]+)ms/.exec(line);
  if (file) fileTimes.push([file[1]!, Number(file[2])]);
  if (diagnostics && diagnostics.lines.length === 1 && line !== `${diagnostics.indent}---`) diagnostics = undefined;
  if (diagnostics) {
    if (diagnostics.lines.length < 60) diagnostics.lines.push(line);
    if (line === `${diagnostics.indent}...`) diagnostics = undefined;
    return;
  }
  const depth = (/^ */.exec(line)![0].length / 4) | 0;
  const subtest = /^\s*# Subtest: (.*)$/.exec(line);
  if (subtest) {
    subtests.length = depth;
    subtests[depth] = subtest[1]!;
    return;
  }
  const failure = /^(\s*)not ok \d+ - (.*)$/.exec(line);
  if (failure) {
    const lines = [[...subtests.slice(0, depth), failure[2]].join(' > ')];
    failures.push(lines);
    diagnostics = { lines, indent: `${failure[1]}  ` };
    return;
  }
  if (/^# \{ total: \d+/.test(line)) summary = line;
};
const totals = { pass: 0, fail: 0, skip: 0 };
let code = 0;
async function runTap(args: string[]): Promise<{ code: number; pass: number; fail: number; skip: number }> {
  summary = '';
  pending = '';
  const tap = track(
    spawn('npx', ['tap', ...args], {
      detached: true,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: {
        ...process.env,
        TEST_DATABASE_URL: infra.adminUrl,
        TEST_TEMPLATE_DATABASE: template,
        NATS_URL: infra.natsUrl,
        APP_ENV: 'test',
        // Every file is a Node process that loads the same modules: V8's compiled code (and Node's stripped
        // TypeScript) is kept between them, which halves what a file spends before its first test.
        NODE_COMPILE_CACHE: COMPILE_CACHE,
        NODE_OPTIONS: [process.env['NODE_OPTIONS'], TEST_PROCESS_PRELOAD].filter(Boolean).join(' '),
      },
    }),
  );
  tap.stdout.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk);
    const lines = (pending + chunk.toString()).split('\n');
    pending = lines.pop() ?? '';
    lines.forEach(readLine);
  });
  const runCode: number = await new Promise((resolve) => tap.on('exit', (c) => resolve(c ?? 1)));
  const count = (name: string) => Number(new RegExp(`${name}: (\\d+)`).exec(summary)?.[1] ?? 0);
  return {
    code: runCode,
    pass: count('pass'),
    fail: count('fail') + (runCode !== 0 && count('fail') === 0 ? 1 : 0),
    skip: count('skip'),
  };
}
for (const args of runs) {
  const run = await runTap(args);
  totals.pass += run.pass;
  totals.fail += run.fail;
  totals.skip += run.skip;
  if (run.code !== 0) code = run.code;
}
await infra.stop();
recordTestTimes(fileTimes);
for (const check of await Promise.all(checks)) {
  if (check.code === 0) continue;
  process.stdout.write(`\n${check.output}`);
  log(
    check.name === 'lint'
      ? 'lint failed (`npm run lint` shows it again; `npm run lint -- --fix` fixes what it can)'
      : `${check.name} failed`,
  );
  failures.push([`${check.name} failed (its output is above)`]);
  if (code === 0) code = check.code;
}
const passed = totals.pass;
const failed = totals.fail;
if (failures.length > 0) {
  // A failed subtest also fails every subtest around it; print only the innermost.
  const innermost = failures.filter(
    ([path], i) => !failures.some(([other], j) => j < i && other!.startsWith(`${path!.replace(/ # time=.*$/, '')} > `)),
  );
  process.stdout.write(`\nfailures (${innermost.length}):\n`);
  for (const lines of innermost.slice(0, 30)) process.stdout.write(`- ${lines.slice(0, 25).join('\n  ')}\n`);
}
const slowest = fileTimes.sort((a, b) => b[1] - a[1]).slice(0, 15);
if (slowest.length > 1)
  process.stdout.write(
    `\nslowest files:\n${slowest.map(([f, ms]) => `  ${(ms / 1000).toFixed(1)} s  ${f}\n`).join('')}`,
  );
log(`finished in ${Math.round((Date.now() - started) / 1000)} s`);
process.stdout.write(`\ntests: ${passed} passed, ${failed} failed${totals.skip ? `, ${totals.skip} skipped` : ''}\n`);
process.exit(code);
