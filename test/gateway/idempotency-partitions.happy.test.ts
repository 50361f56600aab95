import t from 'tap';
import postgres from 'postgres';
import { randomBytes } from 'node:crypto';
import {
  claimKey,
  deleteExpiredKeys,
  idempotencyPartitions,
  KEY_LIFETIME_DAYS,
  storeAnswer,
} from '@platform/gateway/http/idempotency/queries';
import { dropExpiredPartitions, ensurePartitions, partitionsOf, periodsFrom } from '@platform/shared/partitions';
import { explainingConnection } from '../helpers/plans.ts';
import { createTestDatabase } from '../helpers/platform.ts';

/**
 * idempotency_keys is partitioned by day (migration 038) and has no unique key on (owner, key): a key is claimed at
 * most once by the claim's advisory lock and lookup among the live days (claimKey). Here the old rows' partition is
 * taken away so that real days surround now: three days back, today, two ahead.
 */
const db = await createTestDatabase(t);
const { sql } = db;
const DAY = 86_400_000;
await sql`alter table idempotency_keys detach partition idempotency_keys_legacy`;
await sql`drop table idempotency_keys_legacy`;
const days = periodsFrom(idempotencyPartitions, new Date(Date.now() - 3 * DAY), 6);
await ensurePartitions(sql, { ...idempotencyPartitions, ahead: 5 }, days[0]!.from);
const [, twoDaysAgo, yesterday, today] = days.map((d) => d.name);

const owner = 'key_partitions';
const fingerprint = randomBytes(32);
const claimOf = (key: string, requestId: string) => ({ owner, key, fingerprint, requestId, leaseMs: 60_000 });
const rowsOf = (key: string) =>
  sql<{ partition: string; request_id: string }[]>`
    select tableoid::regclass::text as partition, request_id from idempotency_keys where owner = ${owner} and key = ${key}`;

t.test('the same key claimed at once from many connections: exactly one claim, the others find it', async (t) => {
  // Each request as a gateway replica of its own: a pool per claimant, all started together, for 20 keys.
  const pools = Array.from({ length: 6 }, () => postgres(db.url, { max: 1, onnotice: () => {} }));
  t.teardown(() => Promise.all(pools.map((p) => p.end({ timeout: 1 }))));
  for (let k = 0; k < 20; k++) {
    const key = `race-${k}`;
    const states = await Promise.all(pools.map((pool, i) => claimKey(pool, claimOf(key, `req_${k}_${i}`))));
    const kinds = states.map((s) => s.kind).sort();
    t.same(kinds, ['claimed', 'running', 'running', 'running', 'running', 'running'], `${key}: one claim`);
    t.equal((await rowsOf(key)).length, 1, `${key}: one row`);
  }
});

t.test('a key claimed at 23:59 is found at 00:01: its day is looked up after the day ends', async (t) => {
  t.equal((await claimKey(sql, claimOf('boundary', 'req_first'))).kind, 'claimed');
  // The claim as if made a minute before today began: the row moves to yesterday's partition.
  await sql`update idempotency_keys set created_at = date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' - interval '1 minute'
            where owner = ${owner} and key = 'boundary'`;
  t.same(await rowsOf('boundary'), [{ partition: yesterday, request_id: 'req_first' }], "in yesterday's partition");
  t.equal((await claimKey(sql, claimOf('boundary', 'req_second'))).kind, 'running', 'still running: not claimed twice');
  await storeAnswer(sql, owner, 'boundary', 'req_first', { status: 201, headers: {}, body: Buffer.from('first') });
  const replay = await claimKey(sql, claimOf('boundary', 'req_third'));
  t.equal(replay.kind, 'answered', "the next day's request replays the answer");
  t.equal(replay.kind === 'answered' && replay.answer.body.toString(), 'first');
  t.same(await rowsOf('boundary'), [{ partition: yesterday, request_id: 'req_first' }], 'the one row, unmoved');
});

t.test(
  "an abandoned claim of yesterday is taken over in today's partition; its late answer changes nothing",
  async (t) => {
    t.equal((await claimKey(sql, claimOf('abandoned', 'req_gone'))).kind, 'claimed');
    await sql`update idempotency_keys set locked_until = now() - interval '1 second',
              created_at = date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' - interval '1 minute'
            where owner = ${owner} and key = 'abandoned'`;
    t.same(await rowsOf('abandoned'), [{ partition: yesterday, request_id: 'req_gone' }]);
    t.equal((await claimKey(sql, claimOf('abandoned', 'req_retry'))).kind, 'claimed', 'the retry takes it over');
    t.same(await rowsOf('abandoned'), [{ partition: today, request_id: 'req_retry' }], 'a new row today, the old gone');
    await storeAnswer(sql, owner, 'abandoned', 'req_gone', { status: 201, headers: {}, body: Buffer.from('late') });
    const [row] = await sql<{ status: number | null }[]>`
    select status from idempotency_keys where owner = ${owner} and key = 'abandoned'`;
    t.equal(row!.status, null, "the abandoned request's late answer is not stored on the retry's claim");
  },
);

t.test('a key past its 24 hours is claimed anew, its old row deleted', async (t) => {
  t.equal((await claimKey(sql, claimOf('daily', 'req_old'))).kind, 'claimed');
  await storeAnswer(sql, owner, 'daily', 'req_old', { status: 201, headers: {}, body: Buffer.from('old') });
  await sql`update idempotency_keys set created_at = now() - interval '25 hours' where owner = ${owner} and key = 'daily'`;
  t.equal((await claimKey(sql, claimOf('daily', 'req_new'))).kind, 'claimed', 'the work is done again');
  t.same(await rowsOf('daily'), [{ partition: today, request_id: 'req_new' }]);
});

t.test('the claim reads only the live days; expired days are dropped whole, the straddling one purged', async (t) => {
  const { sql: explained, plans } = await explainingConnection(t, db.url);
  await sql`analyze idempotency_keys`;
  plans();
  await claimKey(explained, claimOf('boundary', 'req_fourth'));
  const lookup = plans(); // the claim's: the lock, the lookup, no write (the key is answered)
  const read = [...lookup.matchAll(/Scan (?:using \S+ )?on (idempotency_keys_p\d+)/g)].map((m) => m[1]).sort();
  t.same(read, [yesterday, today], 'the lookup reads yesterday and today only');
  t.match(lookup, /Subplans Removed: 4/, 'the other days are pruned');

  // A key two days old (its day past the lifetime as a whole) and one of yesterday past its 24 hours.
  await claimKey(sql, claimOf('old', 'req_old'));
  await sql`update idempotency_keys set created_at = now() - interval '2 days' where key = 'old'`;
  await claimKey(sql, claimOf('stale', 'req_stale'));
  await sql`update idempotency_keys set created_at = date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' - interval '1 day' + interval '1 minute'
            where key = 'stale'`;
  t.same(await rowsOf('old'), [{ partition: twoDaysAgo, request_id: 'req_old' }]);
  const dropped = await dropExpiredPartitions(sql, idempotencyPartitions, KEY_LIFETIME_DAYS);
  t.ok(
    dropped.includes(twoDaysAgo!) && !dropped.includes(yesterday!),
    `days past the lifetime dropped: ${dropped.join(', ')}`,
  );
  t.same(await rowsOf('old'), [], 'with their keys');
  t.equal(await deleteExpiredKeys(sql, 100), 1, "the purge deletes yesterday's expired key");
  t.same(await rowsOf('stale'), []);
  t.same(
    (await partitionsOf(sql, 'idempotency_keys')).map((p) => p.name),
    [yesterday, today, ...days.slice(4).map((d) => d.name)],
    'the live days and those ahead remain',
  );
});
