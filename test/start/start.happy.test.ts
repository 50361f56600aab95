import { spawn } from 'node:child_process';
import t from 'tap';
import { freePort } from '../../scripts/infra.ts';
import { SERVICES } from '../../scripts/services.ts';
import { createTestDatabase, createTestNats, NATS_URL, ROOT, sleep } from '../helpers/platform.ts';

// `npm start` is a promise to a newcomer: the platform answers on its port within a minute and Ctrl-C stops it all.
t.setTimeout(180_000);

t.test('npm start runs every service, answers within 60 s, and stops cleanly on SIGINT', async (t) => {
  const db = await createTestDatabase(t);
  const bus = await createTestNats(t);
  const port = await freePort();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATABASE_URL: db.url,
    NATS_URL,
    NATS_PREFIX: bus.prefix,
    PORT: String(port),
    LOG_LEVEL: 'info',
  };
  // Ops ports of its own for every service of the registry, so the test does not collide with a platform a developer
  // is running.
  for (const service of SERVICES) env[`${service.toUpperCase()}_OPS_PORT`] = String(await freePort());

  const started = Date.now();
  const child = spawn(process.execPath, [`${ROOT}scripts/start.ts`], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout.on('data', (c: Buffer) => output.push(c.toString()));
  child.stderr.on('data', (c: Buffer) => output.push(c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });

  // Ready when the gateway answers and every service has logged that it started, each as its own process.
  const allStarted = () =>
    SERVICES.every((s) => new RegExp(`${s}\\s*\\| .*"msg":"(started|listening)"`).test(output.join('')));
  let ready = false;
  while (!ready && Date.now() - started < 60_000 && child.exitCode === null) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/openapi`);
      ready = res.status === 200 && allStarted();
    } catch {
      // not listening yet
    }
    if (!ready) await sleep(250);
  }
  t.ok(ready, `the gateway and every service answered within 60 s (${Date.now() - started} ms)\n${output.join('')}`);
  const ops = await fetch(`http://127.0.0.1:${env['AFFILIATES_OPS_PORT']}/readyz`);
  t.equal(ops.status, 200, 'a service answers /readyz on its ops port');

  child.kill('SIGINT');
  t.equal(await exited, 0, 'Ctrl-C stops everything and exits 0');
  t.match(output.join(''), /start: stopped/);
  await t.rejects(fetch(`http://127.0.0.1:${port}/healthz`), 'nothing listens any more');
});
