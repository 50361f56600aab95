import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import postgres from 'postgres';
import t from 'tap';
import { startTestPostgres } from '../../scripts/test-postgres.ts';
import { freePort } from '../helpers/nats-server.ts';

/**
 * `npm test`'s own Postgres (scripts/test-postgres.ts): a cluster of the run's, in memory, that keeps nothing on disk
 * it need not but commits as a real server does, and leaves nothing behind when stopped.
 */
t.test('the suite makes its own cluster, writes nothing it need not, and removes it', async (t) => {
  const cluster = await startTestPostgres(await freePort());
  if (!cluster) {
    t.plan(0, 'no Postgres binaries on this machine: the suite uses the server it finds');
    return;
  }
  t.teardown(() => cluster.stop());
  t.ok(
    [`/dev/shm/`, `${tmpdir()}/`].some((parent) => cluster.dir.startsWith(parent)),
    'in memory, or where it fits',
  );
  const withoutPassword = Object.assign(new URL(cluster.url), { password: '' }).toString();
  const refused = postgres(withoutPassword, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  await t.rejects(refused`select 1`, { code: '28P01' }, "no one signs in over TCP without the run's password");
  await refused.end({ timeout: 1 });
  const sql = postgres(cluster.url, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end({ timeout: 1 }));
  const settings = await sql<{ name: string; setting: string }[]>`
    select name, setting from pg_settings
    where name in ('fsync', 'full_page_writes', 'synchronous_commit', 'wal_level', 'max_connections')
    order by name`;
  t.strictSame(
    Object.fromEntries(settings.map((s) => [s.name, s.setting])),
    { fsync: 'off', full_page_writes: 'off', max_connections: '300', synchronous_commit: 'on', wal_level: 'minimal' },
    'no fsync or full-page images; commits still ask for their WAL',
  );
  await sql`create database copied template template1`;
  t.equal((await sql`select 1 from pg_database where datname = 'copied'`).length, 1, 'it copies databases');
  await sql.end({ timeout: 1 });
  await cluster.stop();
  t.notOk(existsSync(cluster.dir), 'its folder is gone once stopped');
});
