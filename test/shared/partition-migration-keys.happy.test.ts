import t from 'tap';
import postgres from 'postgres';
import { randomBytes } from 'node:crypto';
import { claimKey } from '@platform/gateway/http/idempotency/queries';
import { partitionsOf } from '@platform/shared/partitions';
import { migrateBefore, migrateWhileWriting } from '../helpers/migrations.ts';
import { createTestDatabase } from '../helpers/platform.ts';

/**
 * The migrations that partition idempotency_keys by day (036 to 038) run on a database that has keys, while a
 * gateway of the previous version keeps claiming keys, and several replicas migrate at once: every key is kept and
 * still replays, and the previous version's claim, which needs the old unique key, fails rather than claiming a key
 * twice.
 */
const FIRST = '036';
const db = await createTestDatabase(t, { migrated: false });
const later = await migrateBefore(db.sql, FIRST);

const owner = 'key_before';
const fingerprint = randomBytes(32);
// Keys of the version before: answered ones over the last day, and one still running.
await db.sql`insert into idempotency_keys (owner, key, fingerprint, request_id, created_at, locked_until, status, headers, body)
             select ${owner}, 'old-' || n, ${fingerprint}, 'req_old' || n, now() - n * interval '10 minutes', now(),
                    201, '{}', convert_to('answer ' || n, 'UTF8')
             from generate_series(1, 100) n`;
await db.sql`insert into idempotency_keys (owner, key, fingerprint, request_id, locked_until)
             values (${owner}, 'running', ${fingerprint}, 'req_running', now() + interval '1 hour')`;

/** The previous version's claim (services/gateway/src/http/idempotency/queries.ts before 038), trimmed to its key. */
const oldClaim = (sql: postgres.Sql, key: string) => sql`
  insert into idempotency_keys as k (owner, key, fingerprint, request_id, locked_until)
  values (${owner}, ${key}, ${fingerprint}, ${'req_' + key}, now() + interval '1 minute')
  on conflict (owner, key) do update set locked_until = excluded.locked_until
  where k.created_at <= now() - interval '24 hours'
  returning k.request_id`;

t.test('migrating while the previous version claims keys, from three replicas at once', async (t) => {
  const { applied, written, failures } = await migrateWhileWriting(t, db.url, async (gateway, n) =>
    (await oldClaim(gateway, `during-${n}`)).length > 0 ? `during-${n}` : null,
  );
  t.same(applied.flat().sort(), later, 'each migration applied once, by one replica');
  t.ok(written.length > 10, `the previous version claimed keys until the swap (${written.length})`);
  t.ok(failures.length > 0, 'and its claims fail after it');
  t.same([...new Set(failures.map((f) => f.code))], ['42P10'], 'for want of the unique key: nothing claimed');

  const [kind] = await db.sql<{ relkind: string }[]>`select relkind from pg_class where relname = 'idempotency_keys'`;
  t.equal(kind!.relkind, 'p', 'idempotency_keys is partitioned');
  const [first] = await partitionsOf(db.sql, 'idempotency_keys');
  t.equal(first!.name, 'idempotency_keys_legacy', 'the old table is its first partition');
  t.equal(first!.from, -Infinity);
  const [count] = await db.sql<{ n: number }[]>`select count(*)::int as n from idempotency_keys`;
  t.equal(count!.n, 101 + written.length, 'every key is kept');

  const claimOf = (key: string) => ({ owner, key, fingerprint, requestId: 'req_new', leaseMs: 60_000 });
  const replay = await claimKey(db.sql, claimOf('old-50'));
  t.equal(replay.kind, 'answered', 'a key answered before the migration replays after it');
  t.equal(replay.kind === 'answered' && replay.answer.body.toString(), 'answer 50');
  t.equal((await claimKey(db.sql, claimOf('running'))).kind, 'running', 'one running before is still running');
  t.equal((await claimKey(db.sql, claimOf(written[0]!))).kind, 'running', 'one claimed during it is found too');
  t.equal((await claimKey(db.sql, claimOf('new'))).kind, 'claimed', 'a new key is claimed');
});
