import t from 'tap';
import postgres from 'postgres';
import {
  dropExpiredPartitions,
  ensurePartitions,
  partitionsOf,
  periodsFrom,
  type PartitionedTable,
} from '@platform/shared/partitions';
import { createTestDatabase } from '../helpers/platform.ts';

/**
 * Partitions are made ahead by every replica of the owning service, at once and on a timer, and dropped whole once
 * every row they hold is past the retention (shared/src/partitions.ts).
 */
const db = await createTestDatabase(t);
await db.sql`create table readings (at timestamptz not null, merchant_id text not null, value int not null)
              partition by range (at)`;
const byDay: PartitionedTable = {
  table: 'readings',
  period: 'day',
  keyType: 'timestamptz',
  ahead: 3,
  partitionIndexes: [{ suffix: 'merchant', columns: 'merchant_id, at' }],
  storage: 'autovacuum_vacuum_threshold = 1000',
};
const DAY = 86_400_000;

t.test('replicas making the same partitions at once: each made once, the same set, no error', async (t) => {
  const now = new Date();
  const runs = await Promise.all(Array.from({ length: 6 }, () => ensurePartitions(db.sql, byDay, now)));
  const expected = periodsFrom(byDay, now, 4).map((p) => p.name);
  t.same(runs.flat().sort(), expected.sort(), 'every partition created by exactly one replica');
  t.same(
    (await partitionsOf(db.sql, 'readings')).map((p) => p.name),
    expected,
    'the period holding now and three ahead',
  );
  t.same(await ensurePartitions(db.sql, byDay, now), [], 'a later run finds nothing to do');
  const [index] = await db.sql`select 1 from pg_indexes where indexname = ${expected[0] + '_merchant'}`;
  t.ok(index, 'each partition gets its index');
  const [options] = await db.sql<
    { reloptions: string[] }[]
  >`select reloptions from pg_class where relname = ${expected[0]!}`;
  t.same(options!.reloptions, ['autovacuum_vacuum_threshold=1000'], 'and its storage parameters');
  await db.sql`insert into readings (at, merchant_id, value) values (${new Date(now.getTime() + 3 * DAY)}, 'm', 1)`;
  t.pass('a row three days ahead has its partition');
});

t.test('a month partitioned table takes date bounds', async (t) => {
  await db.sql`create table tallies (day date not null, n int not null) partition by range (day)`;
  const spec: PartitionedTable = { table: 'tallies', period: 'month', keyType: 'date', ahead: 1 };
  const created = await ensurePartitions(db.sql, spec, new Date('2031-12-15T23:00:00Z'));
  t.same(created, ['tallies_p203112', 'tallies_p203201']);
  const [bound] = await db.sql<{ expr: string }[]>`
    select pg_get_expr(relpartbound, oid) as expr from pg_class where relname = 'tallies_p203201'`;
  t.equal(bound!.expr, "FOR VALUES FROM ('2032-01-01') TO ('2032-02-01')");
  // Read from a session in another time zone, the bounds are still UTC days: the month ahead is found covered,
  // and the next is not taken for covered by a month whose end would read five hours late.
  const elsewhere = postgres(db.url, { max: 1, onnotice: () => {}, connection: { TimeZone: 'America/New_York' } });
  t.teardown(() => elsewhere.end({ timeout: 1 }));
  const read = await partitionsOf(elsewhere, 'tallies');
  t.same(
    read.map((p) => [p.name, p.from, p.to]),
    [
      ['tallies_p203112', Date.UTC(2031, 11, 1), Date.UTC(2032, 0, 1)],
      ['tallies_p203201', Date.UTC(2032, 0, 1), Date.UTC(2032, 1, 1)],
    ],
  );
  t.same(await ensurePartitions(elsewhere, { ...spec, ahead: 2 }, new Date('2031-12-15T23:00:00Z')), [
    'tallies_p203202',
  ]);
});

t.test('retention drops the partitions wholly past it; the one straddling it stays', async (t) => {
  const now = Date.now();
  // Days 10 to 4 ago, each with a row at its noon.
  await ensurePartitions(db.sql, { ...byDay, ahead: 6 }, new Date(now - 10 * DAY));
  for (let d = 10; d >= 4; d--) {
    const noon = new Date(Math.floor((now - d * DAY) / DAY) * DAY + DAY / 2);
    await db.sql`insert into readings (at, merchant_id, value) values (${noon}, 'm', ${d})`;
  }
  const dropped = await dropExpiredPartitions(db.sql, byDay, 6);
  // A day's partition ends at the next midnight: the days 10, 9, 8 and 7 ago end at least 6 days ago.
  t.same(
    dropped.sort(),
    periodsFrom(byDay, new Date(now - 10 * DAY), 4).map((p) => p.name),
    'the four days wholly older than six days',
  );
  const values = (await db.sql<{ value: number }[]>`select value from readings order by value desc`).map(
    (r) => r.value,
  );
  t.same(values.slice(0, 3), [6, 5, 4], 'the rows of the days younger than that stay');
  t.same(await dropExpiredPartitions(db.sql, byDay, 6), [], 'nothing more to drop');
});

t.test('retention drops a partition made by hand under a name that needs quoting, and not its namesake', async (t) => {
  await db.sql`create table logs (at timestamptz not null, line text not null) partition by range (at)`;
  const spec: PartitionedTable = { table: 'logs', period: 'day', keyType: 'timestamptz', ahead: 0 };
  // An operator's partition for old rows, in capitals, and an unrelated table its name would fold to unquoted.
  await db.sql`create table "Logs_Archive" partition of logs for values from (minvalue) to ('2020-01-01')`;
  await db.sql`create table logs_archive (line text not null)`;
  await db.sql`insert into logs_archive (line) values ('kept')`;
  t.same(await dropExpiredPartitions(db.sql, spec, 30), ['Logs_Archive'], 'the partition wholly past the retention');
  t.same(
    (await partitionsOf(db.sql, 'logs')).map((p) => p.name),
    [],
    'is gone from the partitioned table',
  );
  t.same(
    await db.sql`select line from logs_archive`,
    [{ line: 'kept' }],
    'and the table of the folded name is untouched',
  );
});
