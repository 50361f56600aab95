import t from 'tap';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { newId } from '@platform/shared/ids';
import { outboxPartitions, startOutboxPurge } from '@platform/shared/outbox';
import { dropExpiredPartitions, ensurePartitions, partitionsOf, periodsFrom } from '@platform/shared/partitions';
import { captureLogger, createTestDatabase, eventually, type TestLike } from '../helpers/platform.ts';

/**
 * Dropping outbox days is the only way the outbox loses rows, and what it loses is events that become commissions and
 * webhooks. Run twice at once (two replicas), it drops each day once and keeps what is unread; stopped by a lock it
 * cannot get in time (a relay's transaction on the day), it drops nothing at all, and the next run finishes the job.
 */
const DAY = 86_400_000;
const now = Date.now();
const noonOf = (daysAgo: number) => new Date(Math.floor((now - daysAgo * DAY) / DAY) * DAY + DAY / 2);
const dayName = (daysAgo: number) => periodsFrom(outboxPartitions, new Date(now - daysAgo * DAY), 1)[0]!.name;

/** A database whose outbox has days from ten ago, one row each (published unless told), read by both reconcilers. */
async function outboxWithDays(t: TestLike, unpublished: number[] = []) {
  const db = await createTestDatabase(t);
  const merchantId = (await createMerchant(db.sql, 'Outbox Drops', 'growth'))!['id'] as string;
  await db.sql`drop table outbox_legacy`;
  await ensurePartitions(db.sql, { ...outboxPartitions, ahead: 12 }, new Date(now - 10 * DAY));
  for (let d = 10; d >= 1; d--) {
    const published = unpublished.includes(d) ? null : noonOf(d);
    await db.sql`
      insert into outbox (id, merchant_id, type, data, created_at, published_at)
      values (${newId('msg')}, ${merchantId}, 'affiliate.created', '{}', ${noonOf(d)}, ${published})`;
  }
  const [last] = await db.sql<{ seq: string }[]>`select max(seq)::text as seq from outbox`;
  await db.sql`update webhook_fanout_watermark set seq = ${last!.seq}`;
  await db.sql`update conversion_reconcile_watermark set seq = ${last!.seq}`;
  return db;
}

const names = async (sql: Parameters<typeof partitionsOf>[0]) => (await partitionsOf(sql, 'outbox')).map((p) => p.name);

t.test('two replicas purge at once: each expired day is dropped once, the unread one is kept', async (t) => {
  const db = await outboxWithDays(t, [8]);
  const logs = [captureLogger('outbox-a'), captureLogger('outbox-b')];
  // A third replica mid-run holds the table's maintenance lock for longer than a table lock may be waited for: the
  // two that start now queue behind it and then find its work done, instead of failing on the wait.
  let release!: () => void;
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const third = db.sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext('partitions:outbox'))`;
    held();
    await new Promise<void>((resolve) => (release = resolve));
  });
  await holding;
  const purges = logs.map(({ log }) => startOutboxPurge(db.sql, log, 3));
  t.teardown(() => Promise.all(purges.map((p) => p.stop())));
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  release();
  await third;
  const left = await eventually(async () => {
    const partitions = await names(db.sql);
    return [10, 9, 7, 6, 5, 4].some((d) => partitions.includes(dayName(d))) ? undefined : partitions;
  });
  t.ok(left.includes(dayName(8)), 'the day with an unpublished row is kept');
  const [unread] = await db.sql<{ n: number }[]>`select count(*)::int as n from outbox where published_at is null`;
  t.equal(unread!.n, 1, 'and its row with it');
  const lines = logs.flatMap(({ lines }) => lines);
  t.notOk(
    lines.some((l) => l.includes('partition maintenance failed')),
    'neither replica failed: the second found the first one’s work done',
  );
  const dropped = lines
    .filter((l) => l.includes('partitions past the retention dropped'))
    .flatMap((l) => (JSON.parse(l) as { partitions: string[] }).partitions);
  t.same([...dropped].sort(), [...new Set(dropped)].sort(), 'no day was dropped twice');
});

t.test('a drop that cannot get its lock in time drops nothing; the next run drops every expired day', async (t) => {
  const db = await outboxWithDays(t);
  const before = await names(db.sql);
  // A relay's transaction still holding a row of nine days ago.
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const relay = db.sql.begin(async (tx) => {
    await tx`select seq from outbox where created_at = ${noonOf(9)} for update`;
    held();
    await released;
  });
  await holding;
  const spec = outboxPartitions;
  await t.rejects(dropExpiredPartitions(db.sql, spec, 3), { code: '55P03' }, 'the lock wait times out');
  t.same(await names(db.sql), before, 'not one day was dropped: the run is one transaction');
  release();
  await relay;
  const dropped = await dropExpiredPartitions(db.sql, spec, 3);
  t.same([...dropped].sort(), [10, 9, 8, 7, 6, 5, 4].map(dayName).sort(), 'the retry dropped every expired day');
  t.same(await dropExpiredPartitions(db.sql, spec, 3), [], 'and a third run finds nothing to do');
});

t.test('a day partition made by hand under a name that needs quoting is read before it is dropped', async (t) => {
  const db = await outboxWithDays(t);
  // An operator's partition for the rows before the daily ones, in capitals, with a row no relay has read.
  const firstDay = periodsFrom(outboxPartitions, new Date(now - 10 * DAY), 1)[0]!.from;
  await db.sql.unsafe(
    `create table "Outbox_Archive" partition of outbox for values from (minvalue) to ('${firstDay.toISOString()}')`,
  );
  const merchantId = (await createMerchant(db.sql, 'Outbox Archive', 'growth'))!['id'] as string;
  await db.sql`
    insert into outbox (id, merchant_id, type, data, created_at)
    values (${newId('msg')}, ${merchantId}, 'affiliate.created', '{}', ${noonOf(11)})`;
  const { log, lines } = captureLogger('outbox');
  const purge = startOutboxPurge(db.sql, log, 3);
  t.teardown(() => purge.stop());
  await eventually(
    async () =>
      lines.some((l) => /partitions past the retention dropped|partition maintenance failed/.test(l)) || undefined,
  );
  t.notOk(
    lines.some((l) => l.includes('partition maintenance failed')),
    'the unread-rows check reads the partition by its own name',
  );
  const left = await names(db.sql);
  t.ok(left.includes('Outbox_Archive'), 'the partition with an unread row is kept');
  t.notOk(
    [10, 9, 8, 7, 6, 5, 4].some((d) => left.includes(dayName(d))),
    'the expired days around it are dropped',
  );
  const [unread] = await db.sql<{ n: number }[]>`select count(*)::int as n from outbox where published_at is null`;
  t.equal(unread!.n, 1, 'and its row with it');
});
