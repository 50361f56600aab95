import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ROOT } from '../helpers/platform.ts';

/**
 * Every process starts through runMain (shared/src/main.ts). An exception nothing caught, or a rejection nothing
 * handled, used to end the process with Node's own stack trace on stderr: no JSON line, no cause, no drain. Now it
 * is logged with its cause, the process drains as on SIGTERM and exits 1. Here a process of runMain's making fails
 * from a timer, as a stray callback of a service would.
 */
const dir = mkdtempSync(join(tmpdir(), 'last-resort-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const script = join(dir, 'main.ts');
writeFileSync(
  script,
  `import { runMain } from ${JSON.stringify(join(ROOT, 'shared/src/main.ts'))};
const mode = process.argv[2];
runMain('last-resort-test', async () => {
  setTimeout(() => {
    const err = new Error('boom', { cause: new Error('the root cause') });
    if (mode === 'throw') throw err;
    void Promise.reject(err);
  }, 50);
  const alive = setInterval(() => {}, 1000);
  return {
    async close() {
      clearInterval(alive);
      process.stdout.write(JSON.stringify({ msg: 'closed' }) + '\\n');
    },
  };
});
`,
);

const run = (mode: 'throw' | 'reject') =>
  new Promise<{ code: number | null; lines: Record<string, unknown>[]; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [script, mode], { cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const lines = stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      resolve({ code, lines, stderr });
    });
  });

for (const [mode, what] of [
  ['throw', 'uncaught exception'],
  ['reject', 'unhandled rejection'],
] as const) {
  t.test(`${what}: logged with its cause, then drained, exit 1`, async (t) => {
    const { code, lines, stderr } = await run(mode);
    t.equal(code, 1, stderr);
    t.match(lines, [
      {
        level: 'error',
        service: 'last-resort-test',
        msg: `${what}; stopping`,
        err: { name: 'Error', message: 'boom', stack: /boom/, cause: { message: 'the root cause' } },
      },
      { level: 'info', msg: `${what}: draining` },
      { msg: 'closed' },
    ]);
  });
}
