import t from 'tap';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { newId } from '@platform/shared/ids';
import { outboxPartitions, startOutboxPurge } from '@platform/shared/outbox';
import { ensurePartitions, partitionsOf, periodsFrom } from '@platform/shared/partitions';
import { captureLogger, createTestDatabase, eventually } from '../helpers/platform.ts';

/**
 * The outbox is partitioned by day. Its purge drops a day past OUTBOX_RETENTION_DAYS only when nothing in it is
 * still to be read: every row published (or set aside) and passed by both reconcilers. What is past the retention
 * in a day it keeps is deleted row by row, as before partitioning.
 */
const db = await createTestDatabase(t);
const merchantId = (await createMerchant(db.sql, 'Outbox Partitions', 'growth'))!['id'] as string;
const DAY = 86_400_000;
const now = Date.now();
const noonOf = (daysAgo: number) => new Date(Math.floor((now - daysAgo * DAY) / DAY) * DAY + DAY / 2);

// A database migrated moments ago: the old table's partition is empty; days from ten ago take its place.
await db.sql`drop table outbox_legacy`;
await ensurePartitions(db.sql, { ...outboxPartitions, ahead: 12 }, new Date(now - 10 * DAY));
const dayName = (daysAgo: number) => periodsFrom(outboxPartitions, new Date(now - daysAgo * DAY), 1)[0]!.name;

async function row(daysAgo: number, published: boolean): Promise<string> {
  const [r] = await db.sql<{ seq: string }[]>`
    insert into outbox (id, merchant_id, type, data, created_at, published_at)
    values (${newId('msg')}, ${merchantId}, 'affiliate.created', '{}', ${noonOf(daysAgo)},
            ${published ? noonOf(daysAgo) : null})
    returning seq::text`;
  return r!.seq;
}

t.test('days wholly read and past the retention are dropped; the others keep what is still to be read', async (t) => {
  const seqs = new Map<number, string>();
  for (let d = 10; d >= 1; d--) {
    seqs.set(d, await row(d, true));
    if (d === 8) await row(8, false);
  }
  // Both reconcilers have passed the row of six days ago, not those after it.
  await db.sql`update webhook_fanout_watermark set seq = ${seqs.get(6)!}`;
  await db.sql`update conversion_reconcile_watermark set seq = ${seqs.get(6)!}`;

  const { log } = captureLogger('outbox');
  const purge = startOutboxPurge(db.sql, log, 3);
  t.teardown(() => purge.stop());
  const names = await eventually(async () => {
    const partitions = (await partitionsOf(db.sql, 'outbox')).map((p) => p.name);
    if (partitions.includes(dayName(10))) return undefined;
    const [left] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from outbox where created_at = ${noonOf(8)} and published_at is not null`;
    if (left!.n !== 0) return undefined;
    return partitions;
  });
  for (const d of [10, 9, 7, 6]) t.notOk(names.includes(dayName(d)), `${d} days ago: read by all, dropped`);
  t.ok(names.includes(dayName(8)), '8 days ago: an unpublished row keeps the day');
  for (const d of [5, 4]) t.ok(names.includes(dayName(d)), `${d} days ago: not passed by the reconcilers, kept`);
  for (const d of [3, 2, 1, 0, -1]) t.ok(names.includes(dayName(d)), `${d} days ago: within the retention, kept`);

  const left = await db.sql<{ created_at: Date; published: boolean }[]>`
    select created_at, published_at is not null as published from outbox order by seq`;
  t.same(
    left.map((r) => [Math.round((now - r.created_at.getTime()) / DAY), r.published]),
    [
      [8, false],
      [5, true],
      [4, true],
      [3, true],
      [2, true],
      [1, true],
    ].map(([d, p]) => [Math.round((now - noonOf(d as number).getTime()) / DAY), p]),
    'the unpublished row and every row not yet passed or within the retention stay; the read one of its day went',
  );
});
