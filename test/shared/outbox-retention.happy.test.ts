import t from 'tap';
import { createMerchant } from '../../scripts/admin/commands.ts';
import { newId } from '@platform/shared/ids';
import { pruneOutbox, startOutboxPurge } from '@platform/shared/outbox';
import { captureLogger, createTestDatabase, eventually } from '../helpers/platform.ts';

/**
 * The outbox would grow by a row per event for ever: a service that runs a relay deletes published rows past
 * OUTBOX_RETENTION_DAYS, but only those both reconcilers (the dispatcher's and the commissions service's) have
 * passed, since they read the outbox to recover what the streams lose.
 */
const db = await createTestDatabase(t);
const merchantId = (await createMerchant(db.sql, 'Outbox Retention', 'growth'))!['id'] as string;

/** An outbox row published `ageDays` ago; answers its seq. */
async function publishedRow(type: string, ageDays: number): Promise<bigint> {
  const [row] = await db.sql<{ seq: string }[]>`
    insert into outbox (id, merchant_id, type, data, created_at, published_at)
    values (${newId('msg')}, ${merchantId}, ${type}, '{}'::jsonb, now() - ${ageDays} * interval '1 day', now() - ${ageDays} * interval '1 day')
    returning seq::text`;
  return BigInt(row!.seq);
}
const setWatermarks = async (webhooks: bigint, conversions: bigint) => {
  await db.sql`update webhook_fanout_watermark set seq = ${webhooks.toString()}`;
  await db.sql`update conversion_reconcile_watermark set seq = ${conversions.toString()}`;
};
const remaining = async () =>
  (await db.sql<{ seq: string }[]>`select seq::text from outbox order by seq`).map((r) => BigInt(r.seq));

t.test('published rows past the retention go once both reconcilers have passed them; the rest stay', async (t) => {
  const old1 = await publishedRow('affiliate.created', 10);
  const old2 = await publishedRow('conversion.recorded', 10);
  const recent = await publishedRow('commission.created', 1);
  const pastConversions = await publishedRow('affiliate.approved', 10);
  const pastBoth = await publishedRow('conversion.recorded', 10);
  // An unpublished row (its relay has not taken it yet) as old as the others.
  const [unpublished] = await db.sql<{ seq: string }[]>`
    insert into outbox (id, merchant_id, type, data, created_at) values (${newId('msg')}, ${merchantId}, 'affiliate.created', '{}'::jsonb, now() - interval '10 days')
    returning seq::text`;
  await setWatermarks(pastConversions, recent);

  // The purge a service runs beside its relay deletes at start. No relay runs here: the unpublished row stays
  // unpublished, as one whose relay has not taken it yet.
  const { log, lines } = captureLogger('outbox');
  const purge = startOutboxPurge(db.sql, log, 7);
  t.teardown(() => purge.stop());
  await eventually(async () => ((await remaining()).includes(old1) ? undefined : true), 10_000, 'the purge at start');
  t.same(
    await remaining(),
    [recent, pastConversions, pastBoth, BigInt(unpublished!.seq)],
    'the two old rows both reconcilers passed are gone',
  );
  t.ok(
    lines.some(
      (l) => l.includes('"msg":"published outbox rows past the retention deleted"') && l.includes('"count":2'),
    ),
    'logged',
  );
  t.notOk((await remaining()).includes(old2));

  await setWatermarks(pastBoth, pastBoth);
  t.equal(await pruneOutbox(db.sql, 7, 5000), 2, 'then the two the watermarks have now passed');
  t.same(await remaining(), [recent, BigInt(unpublished!.seq)], 'the recent and the unpublished row stay');
  t.equal(await pruneOutbox(db.sql, 30, 5000), 0, 'a longer retention deletes nothing more');
});

t.test('deletes in batches of the given size, oldest first', async (t) => {
  const seqs: bigint[] = [];
  for (let i = 0; i < 5; i++) seqs.push(await publishedRow('affiliate.created', 20));
  await setWatermarks(seqs[4]!, seqs[4]!);
  const before = await remaining();
  t.equal(await pruneOutbox(db.sql, 7, 3), 3);
  t.same(
    await remaining(),
    before.filter((s) => !seqs.slice(0, 3).includes(s)),
    'the three oldest',
  );
  t.equal(await pruneOutbox(db.sql, 7, 3), 2);
  t.equal(await pruneOutbox(db.sql, 7, 3), 0);
});
