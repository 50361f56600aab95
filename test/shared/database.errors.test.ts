import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import t from 'tap';
import { connectDatabase, type Sql } from '@platform/shared/db';
import { createTestDatabase, sleep } from '../helpers/platform.ts';

// A connection whose server goes away must fail the queries on it with an error the caller can catch, never with
// an uncaught exception that takes the service down (postgres 3.4.9 throws one from a deferred socket write;
// scripts/patch-dependencies.ts guards it at install time until upstream releases a fix).

t.test('the installed postgres driver carries the guard', async (t) => {
  const root = resolve(createRequire(import.meta.url).resolve('postgres'), '../../..');
  for (const file of ['src/connection.js', 'cjs/src/connection.js']) {
    t.match(readFileSync(resolve(root, file), 'utf8'), /function nextWrite\(fn\) \{\n\s+if \(!socket\)/, file);
  }
});

t.test('queries on a connection whose backend was terminated reject with CONNECTION_CLOSED', async (t) => {
  const { url, sql: admin } = await createTestDatabase(t);
  const sql = connectDatabase(url, { max: 1, applicationName: 'connection-loss' });
  t.teardown(() => sql.end({ timeout: 1 }));
  const uncaught: Error[] = [];
  const onUncaught = (err: Error) => uncaught.push(err);
  // tap reports uncaught exceptions as failures too; this listener only makes the assertion below explicit.
  process.prependListener('uncaughtException', onUncaught);
  t.teardown(() => void process.removeListener('uncaughtException', onUncaught));

  // A reserved connection cannot be rotated away by the pool, so every query after the loss reaches the dead one.
  const reserved = await sql.reserve();
  const [backend] = await reserved<{ pid: number }[]>`select pg_backend_pid() as pid`;
  const [kill] = await admin<{ terminated: boolean }[]>`select pg_terminate_backend(${backend!.pid}) as terminated`;
  t.equal(kill?.terminated, true);
  await sleep(200);
  for (let i = 0; i < 3; i++) {
    await t.rejects(reserved`select 1`, { code: 'CONNECTION_CLOSED' }, `query ${i + 1} on the dead connection`);
  }
  reserved.release();
  t.same(
    uncaught.map((e) => e.message),
    [],
    'no uncaught exception',
  );

  // Released, the dead connection is back in the pool: at most one query meets it, then the pool reconnects.
  const { after, outcomes } = await backendAfterFailures(sql);
  t.ok(after !== undefined && after !== backend!.pid, `the pool reconnects (${JSON.stringify(outcomes)} before it)`);
  t.ok(
    outcomes.length <= 1 && outcomes.every((code) => code === 'CONNECTION_CLOSED'),
    'at most one CONNECTION_CLOSED first',
  );
});

t.test('a pooled connection whose backend was terminated is replaced', async (t) => {
  const { url, sql: admin } = await createTestDatabase(t);
  const sql = connectDatabase(url, { max: 1, applicationName: 'connection-loss' });
  t.teardown(() => sql.end({ timeout: 1 }));
  const [before] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
  await admin`select pg_terminate_backend(${before!.pid})`;
  await sleep(200);
  // The first query may still meet the closing connection; the next ones get a new one.
  const { after, outcomes } = await backendAfterFailures(sql);
  t.ok(after !== undefined && after !== before!.pid, `a new backend answers (${JSON.stringify(outcomes)} before it)`);
  t.ok(
    outcomes.every((code) => code === 'CONNECTION_CLOSED' || code === '57P01'),
    'any failure is a connection error',
  );
});

/** Asks for the backend's pid up to five times: the pid that answered, and the error codes of the tries before. */
async function backendAfterFailures(sql: Sql): Promise<{ after: number | undefined; outcomes: string[] }> {
  const outcomes: string[] = [];
  for (let i = 0; i < 5; i++) {
    try {
      const [row] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
      return { after: row!.pid, outcomes };
    } catch (err) {
      outcomes.push((err as { code?: string }).code ?? 'no code');
    }
  }
  return { after: undefined, outcomes };
}
