import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { batchEntry, planBatches } from '../../scripts/test-batches.ts';
import { ROOT } from '../helpers/platform.ts';

/**
 * A batch runs its files one after another in one process (test/helpers/batch.ts), each as if alone: its `t` its
 * own, its teardowns done before the next file starts, a file that fails not stopping the next; a helper that
 * imports tap gets the root. Three small files of a batch are run here as npm test runs one, and tell what they saw.
 */
// Under the tree, so that `tap` resolves from its node_modules; .scratch/ is not tracked.
const dir = join(ROOT, '.scratch', `batch-${process.pid}`);
mkdirSync(dir, { recursive: true });
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const seen = join(dir, 'seen.log');
const note = (line: string) => `appendFileSync(${JSON.stringify(seen)}, ${JSON.stringify(line)} + '\\n');`;
writeFileSync(join(dir, 'helper.mjs'), `import t from 'tap';\nexport const root = t;\n`);
const file = (name: string, body: string) => {
  const path = join(dir, `${name}.test.mjs`);
  writeFileSync(
    path,
    `import { appendFileSync } from 'node:fs';\nimport t from 'tap';\nimport { root } from './helper.mjs';\n` +
      `${note(`${name} start`)}\n` +
      `appendFileSync(${JSON.stringify(seen)}, '${name} own t: ' + (t !== root) + ', named ' + t.name + '\\n');\n` +
      `t.teardown(() => { ${note(`${name} teardown`)} });\n${body}\n`,
  );
  return path;
};
const paths = [
  file('first', `t.test('passes', async (t) => t.pass());`),
  file('second', `t.test('fails', async (t) => t.fail('on purpose'));`),
  file('third', `t.test('passes', async (t) => t.pass());`),
];
const entry = join(dir, 'entry.mjs');
writeFileSync(entry, batchEntry(dir, paths));

/** Runs a batch's entry as npm test does (a process of its own) and answers how it ended and what it printed. */
const runBatch = (entryPath: string, env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const child = spawn(process.execPath, [entryPath], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('close', (code) => resolve({ code, out, err }));
  });

t.test(
  'files run one after another, each with its own t and teardowns; a failure does not stop the next',
  async (t) => {
    const run = await runBatch(entry);
    t.strictSame(readFileSync(seen, 'utf8').trim().split('\n'), [
      'first start',
      'first own t: true, named first.test.mjs',
      'first teardown',
      'second start',
      'second own t: true, named second.test.mjs',
      'second teardown',
      'third start',
      'third own t: true, named third.test.mjs',
      'third teardown',
    ]);
    t.match(run.out, /^ok 1 - first\.test\.mjs/m);
    t.match(run.out, /^not ok 2 - second\.test\.mjs/m);
    t.match(run.out, /^ok 3 - third\.test\.mjs/m);
    t.not(run.code, 0, 'the batch fails with its failed file');
  },
);

t.test('a file that leaves a server listening does not keep its batch alive: the batch ends, failed', async (t) => {
  // What a file whose start fails half-way leaves: a handle nothing will close, which alone its timeout would end.
  const leaky = file(
    'leaky',
    `import { createServer } from 'node:net';\ncreateServer().listen(0, '127.0.0.1');\nt.pass('started');`,
  );
  const leakyEntry = join(dir, 'leaky-entry.mjs');
  writeFileSync(leakyEntry, batchEntry(dir, [leaky, paths[0]!]));
  const started = Date.now();
  // A file's timeout (tap's TAP_TIMEOUT, in seconds) is also how long the process may outlive its last file.
  const run = await runBatch(leakyEntry, { TAP_TIMEOUT: '3' });
  t.ok(Date.now() - started < 20_000, 'the process ended a file timeout after its last file');
  t.match(run.out, /^ok 1 - leaky\.test\.mjs/m);
  t.match(run.out, /^ok 2 - first\.test\.mjs/m);
  t.match(run.err, /still open after its last file: .*TCPServerWrap/);
  t.not(run.code, 0, 'what was left open fails the batch');
});

t.test('batches are a folder’s files four at a time, the longest expected first', async (t) => {
  const files = ['a/1', 'a/2', 'a/3', 'a/4', 'a/5', 'b/x.browser.happy', 'c/slow'].map((f) => `test/${f}.test.ts`);
  const names = (times: Record<string, number>) => planBatches(files, times).map((b) => b.name);
  t.same(
    planBatches(files, {}).find((b) => b.name === 'test-a-1')?.files,
    files.slice(0, 4),
    'a folder’s files in order, four to a batch',
  );
  // Never timed: a browser file is guessed longer than three other files, shorter than four.
  t.same(names({}), ['test-a-1', 'test-b-1', 'test-a-2', 'test-c-1'], 'guessed: by kind and count');
  t.same(
    names({ 'test/c/slow.test.ts': 60_000, 'test/b/x.browser.happy.test.ts': 1_000 }),
    ['test-c-1', 'test-a-1', 'test-a-2', 'test-b-1'],
    'timed: by the last run’s times',
  );
});
