import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import t, { type Test } from 'tap';
import { freePort } from '../../scripts/infra.ts';
import { SERVICES } from '../../scripts/services.ts';
import { createTestNats, NATS_URL, ROOT } from '../helpers/platform.ts';

// A newcomer's first `npm start` meets a busy port or a database that is not there: one line that says what to do,
// a non-zero exit, no stack trace.
t.setTimeout(60_000);
const ADMIN_URL = process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function start(t: Test, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const bus = await createTestNats(t);
  const child = spawn(process.execPath, [`${ROOT}scripts/start.ts`], {
    env: { ...(process.env as Record<string, string>), NATS_URL, NATS_PREFIX: bus.prefix, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout.on('data', (c: Buffer) => output.push(c.toString()));
  child.stderr.on('data', (c: Buffer) => output.push(c.toString()));
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  // A start that hangs is stopped before the file's timeout, so that the failure shows what it said until then.
  const hung = setTimeout(() => {
    output.push('\n[the test stopped it: no exit within 40 s]\n');
    child.kill('SIGKILL');
  }, 40_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(hung);
  return { code, output: output.join('') };
}

const ports = async () => {
  const env: Record<string, string> = { PORT: String(await freePort()) };
  for (const service of SERVICES) env[`${service.toUpperCase()}_OPS_PORT`] = String(await freePort());
  return env;
};

t.test('a busy port: one line naming the port and its variable, exit 1', async (t) => {
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, resolve));
  t.teardown(() => busy.close());
  const port = (busy.address() as { port: number }).port;
  for (const variable of ['PORT', 'EVENTS_OPS_PORT']) {
    const { code, output } = await start(t, { ...(await ports()), [variable]: String(port), DATABASE_URL: ADMIN_URL });
    t.equal(code, 1, `${variable} busy: exit 1`);
    t.match(
      output,
      `start: port ${port} (${variable}) is in use: stop what listens there, or run with ${variable}=<another port>\n`,
    );
    t.notMatch(output, /\n\s+at /, 'no stack trace');
  }
});

t.test('a DATABASE_URL whose database does not exist: one line with the command that creates it, exit 1', async (t) => {
  const url = new URL(ADMIN_URL);
  url.pathname = '/no_such_database_here';
  const { code, output } = await start(t, { ...(await ports()), DATABASE_URL: url.toString() });
  t.equal(code, 1);
  t.match(
    output,
    `start: database "no_such_database_here" does not exist on ${url.hostname}:${url.port || 5432}: create it (createdb -h ${url.hostname} -p ${url.port || 5432}`,
  );
  t.match(output, 'or unset DATABASE_URL to let npm start make its own\n');
  t.notMatch(output, /\n\s+at /, 'no stack trace');
});
