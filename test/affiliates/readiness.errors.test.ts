import postgres from 'postgres';
import t from 'tap';
import { createTestNats, eventually, NATS_URL, spawnService } from '../helpers/platform.ts';

// /readyz answers ready only while the service's Postgres and NATS connections are up: a service whose database
// disappears is taken out of rotation, while /healthz (the process is alive) stays 200.
t.setTimeout(120_000);

t.test('/readyz turns 503 when the database goes away; /healthz stays 200', async (t) => {
  const adminUrl = process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `t_ready_${Date.now().toString(36)}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  t.teardown(async () => {
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  });
  await admin.unsafe(`create database "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const bus = await createTestNats(t);
  // A process of its own, as in production: what the driver does with the connections of a database that has gone
  // away (queries retried, some failing after nobody waits for them) stays in that process.
  const service = await spawnService(t, 'affiliates', {
    APP_ENV: 'test',
    DATABASE_URL: url.toString(),
    NATS_URL,
    NATS_PREFIX: bus.prefix,
    OPS_PORT: '0',
    DATABASE_POOL_SIZE: '2',
    LOG_LEVEL: 'info',
  });
  const started = service.output.map((l) => /"ops_port":(\d+)/.exec(l)).find((m) => m !== null);
  const ops = `http://127.0.0.1:${started![1]}`;
  t.equal((await fetch(`${ops}/readyz`)).status, 200, 'ready while Postgres and NATS are up');

  await admin.unsafe(`drop database "${name}" with (force)`);
  const status = await eventually(
    async () => {
      const res = await fetch(`${ops}/readyz`);
      return res.status === 503 ? res.status : undefined;
    },
    15_000,
    '/readyz to report the lost database',
  );
  t.equal(status, 503, 'not ready once the database is gone');
  t.equal((await fetch(`${ops}/healthz`)).status, 200, 'still alive');
});
