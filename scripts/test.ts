import { spawn, spawnSync } from 'node:child_process';
import { ensureInfra } from './infra.ts';

/**
 * `npm test`: type-check, then the tap suite against real Postgres and NATS (found or started, see infra.ts).
 * Each test file creates its own database and NATS prefix from TEST_DATABASE_URL and NATS_URL.
 * Extra arguments go to tap (`npm test -- test/gateway/auth.test.ts`).
 */
const log = (line: string) => process.stderr.write(`test: ${line}\n`);
// The runtime the suite runs on: the `node` package's binary in node_modules/.bin comes first on npm's PATH.
process.stdout.write(`test: node ${process.version}\n`);

const typecheck = spawnSync('npx', ['tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' });
if (typecheck.status !== 0) {
  log('type check failed');
  process.exit(typecheck.status ?? 1);
}

const infra = await ensureInfra({ purpose: 'test', log });
log(infra.describe.join('; '));
const tap = spawn('npx', ['tap', ...process.argv.slice(2)], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, TEST_DATABASE_URL: infra.adminUrl, NATS_URL: infra.natsUrl, APP_ENV: 'test' },
});
// Pass tap's output through, remember its summary ("# { total: 12, pass: 11, fail: 1 }") and every failure with
// the subtests it sits in and its diagnostics, so that the end of a long CI log says what failed.
let summary = '';
let pending = '';
const subtests: string[] = [];
const failures: string[][] = [];
let diagnostics: { lines: string[]; indent: string } | undefined;
const readLine = (line: string) => {
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
tap.stdout!.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk);
  const lines = (pending + chunk.toString()).split('\n');
  pending = lines.pop() ?? '';
  lines.forEach(readLine);
});
const code: number = await new Promise((resolve) => tap.on('exit', (c) => resolve(c ?? 1)));
await infra.stop();
const count = (name: string) => Number(new RegExp(`${name}: (\\d+)`).exec(summary)?.[1] ?? 0);
const passed = count('pass');
const failed = count('fail') + (code !== 0 && count('fail') === 0 ? 1 : 0);
if (failures.length > 0) {
  // A failed subtest also fails every subtest around it; print only the innermost.
  const innermost = failures.filter(
    ([path], i) => !failures.some(([other], j) => j < i && other!.startsWith(`${path!.replace(/ # time=.*$/, '')} > `)),
  );
  process.stdout.write(`\nfailures (${innermost.length}):\n`);
  for (const lines of innermost.slice(0, 30)) process.stdout.write(`- ${lines.slice(0, 25).join('\n  ')}\n`);
}
process.stdout.write(`\ntests: ${passed} passed, ${failed} failed${count('skip') ? `, ${count('skip')} skipped` : ''}\n`);
process.exit(code);
