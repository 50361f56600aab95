import t, { type Test } from 'tap';
import { jetstreamManager } from '@nats-io/jetstream';
import { COMMISSIONS_CONSUMER, streamName } from '@platform/shared/catalogue';
import { eventually, spawnService, startPlatform, type Platform } from '../helpers/platform.ts';
import {
  awaitProcessed,
  conversion,
  DAY_MS,
  createAffiliate,
  publishConversion,
  recordConversions,
  setMerchantSettings,
  startCommissions,
  streamEvents,
  testClock,
} from '../helpers/commissions.ts';
import type { ConversionRecorded } from '@platform/shared/catalogue';

/**
 * A conversion event yields its commissions exactly once, whatever JetStream redelivers: a replica killed in the
 * middle of a burst, several replicas on one consumer, the same event published twice.
 *
 * Amounts are whole units at rates 10 %, then 50 % and 20 % of that for levels 1 and 2, so every expected commission
 * is exact in cents: amount × 10, × 5 and × 2.
 */

interface Lineage {
  ids: string[];
  parentOf: Map<string, string | null>;
}

async function programme(platform: Platform, affiliatesCount: number) {
  const m = await platform.merchant();
  await setMerchantSettings(platform.sql, m.id, ['default_rate=0.1', 'level_rates=[0.5,0.2]']);
  const lineage: Lineage = { ids: [], parentOf: new Map() };
  for (let i = 0; i < affiliatesCount; i++) {
    const parentIndex = i === 0 ? null : Math.floor(Math.random() * i);
    const a = await createAffiliate(m.client, {
      email: `member${i}@example.com`,
      ...(parentIndex === null ? {} : { parent_email: `member${parentIndex}@example.com` }),
    });
    lineage.ids.push(a.id);
    lineage.parentOf.set(a.id, parentIndex === null ? null : lineage.ids[parentIndex]!);
  }
  return { m, lineage };
}

function burst(lineage: Lineage, count: number): ConversionRecorded[] {
  return Array.from({ length: count }, (_, i) =>
    conversion({
      affiliate_id: lineage.ids[i % lineage.ids.length]!,
      amount: `${1 + Math.floor(Math.random() * 5000)}.00`,
    }),
  );
}

/** [level, affiliate, cents] expected for one conversion. */
function expectedFor(c: ConversionRecorded, lineage: Lineage): [number, string, bigint][] {
  const units = BigInt(c.amount.split('.')[0]!);
  const out: [number, string, bigint][] = [[0, c.affiliate_id!, units * 10n]];
  const parent = lineage.parentOf.get(c.affiliate_id!) ?? null;
  if (parent) {
    out.push([1, parent, units * 5n]);
    const grandparent = lineage.parentOf.get(parent) ?? null;
    if (grandparent) out.push([2, grandparent, units * 2n]);
  }
  return out;
}

async function verifyExactlyOnce(
  t: Test,
  platform: Platform,
  merchantId: string,
  conversions: ConversionRecorded[],
  lineage: Lineage,
) {
  const rows = await platform.sql<{ event_id: string; level: number; affiliate_id: string; cents: string }[]>`
    select event_id, level, affiliate_id, (amount * 100)::bigint::text as cents from commissions where merchant_id = ${merchantId}`;
  const byEvent = new Map<string, string[]>();
  for (const r of rows)
    byEvent.set(r.event_id, [...(byEvent.get(r.event_id) ?? []), `${r.level}:${r.affiliate_id}:${r.cents}`]);
  let wrong = 0;
  let expectedTotal = 0;
  for (const c of conversions) {
    const expected = expectedFor(c, lineage)
      .map(([l, a, cents]) => `${l}:${a}:${cents}`)
      .sort();
    expectedTotal += expected.length;
    const actual = (byEvent.get(c.event_id) ?? []).sort();
    if (JSON.stringify(actual) !== JSON.stringify(expected)) {
      wrong++;
      if (wrong <= 5) t.fail(`event ${c.event_id}: ${JSON.stringify(actual)} instead of ${JSON.stringify(expected)}`);
    }
  }
  t.equal(wrong, 0, `every one of ${conversions.length} events has exactly its commissions`);
  t.equal(rows.length, expectedTotal, 'none missing, none doubled');

  const [outbox] = await platform.sql<{ n: number; distinct_ids: number }[]>`
    select count(*)::int as n, count(distinct data->>'commission_id')::int as distinct_ids
    from outbox where merchant_id = ${merchantId} and type = 'commission.created'`;
  t.same(
    outbox,
    { n: expectedTotal, distinct_ids: expectedTotal },
    'one commission.created per commission in the outbox',
  );

  const revenue = await platform.sql<{ affiliate_id: string; revenue: string; conversions: number }[]>`
    select affiliate_id, attributed_revenue::text as revenue, conversions from affiliate_stats where merchant_id = ${merchantId}`;
  const expectedRevenue = new Map<string, { units: bigint; n: number }>();
  for (const c of conversions) {
    const e = expectedRevenue.get(c.affiliate_id!) ?? { units: 0n, n: 0 };
    expectedRevenue.set(c.affiliate_id!, { units: e.units + BigInt(c.amount.split('.')[0]!), n: e.n + 1 });
  }
  t.same(
    Object.fromEntries(revenue.map((r) => [r.affiliate_id, [r.revenue, r.conversions]])),
    Object.fromEntries([...expectedRevenue].map(([id, e]) => [id, [`${e.units}.00`, e.n]])),
    'attributed revenue counted once per event',
  );

  // The stream (what the dispatcher fans out to webhooks) holds each commission.created once.
  const published = await eventually(
    async () => {
      const events = (
        await streamEvents<{ commission_id: string }>(platform.nc, platform.prefix, 'commission.created')
      ).filter((e) => e.merchant_id === merchantId);
      return events.length >= expectedTotal ? events : undefined;
    },
    60_000,
    'commission.created on the stream',
  );
  t.equal(published.length, expectedTotal);
  t.equal(
    new Set(published.map((e) => e.data.commission_id)).size,
    expectedTotal,
    'no commission.created published twice',
  );
}

/** Resolves once the shared consumer has nothing pending and nothing unacknowledged. */
async function consumerDrained(platform: Platform) {
  const jsm = await jetstreamManager(platform.nc);
  await eventually(
    async () => {
      const info = await jsm.consumers.info(
        streamName(platform.prefix, COMMISSIONS_CONSUMER.stream),
        COMMISSIONS_CONSUMER.durable_name,
      );
      return info.num_pending === 0 && info.num_ack_pending === 0 ? true : undefined;
    },
    60_000,
    'the commissions consumer to drain',
  );
}

t.test('killed and restarted in the middle of a burst of 1,000: each event has exactly its commissions', async (t) => {
  const platform = await startPlatform(t);
  const { m, lineage } = await programme(platform, 12);
  const env = { ...platform.env, LOG_LEVEL: 'info', OPS_PORT: '0' };
  const first = await spawnService(t, 'commissions', env);

  const conversions = burst(lineage, 1000);
  await recordConversions(platform.sql, m.id, conversions);
  const countProcessed = async () =>
    (
      await platform.sql<
        { n: number }[]
      >`select count(*)::int as n from processed_conversions where merchant_id = ${m.id}`
    )[0]!.n;
  await eventually(
    async () => ((await countProcessed()) >= 150 ? true : undefined),
    60_000,
    '150 conversions processed',
  );
  first.child.kill('SIGKILL');
  t.equal(await first.exited, null, 'killed, not exited');
  const atKill = await countProcessed();
  t.ok(atKill > 0 && atKill < 1000, `killed mid-burst (${atKill} of 1000 processed)`);

  const second = await spawnService(t, 'commissions', env);
  await awaitProcessed(
    platform.sql,
    m.id,
    conversions.map((c) => c.event_id),
    120_000,
  );
  await consumerDrained(platform);
  await verifyExactlyOnce(t, platform, m.id, conversions, lineage);

  // The same events published again (a re-publish JetStream cannot dedupe: new message ids) change nothing.
  for (const c of conversions.slice(0, 25)) await publishConversion(platform.nc, platform.prefix, m.id, c);
  await consumerDrained(platform);
  await verifyExactlyOnce(t, platform, m.id, conversions, lineage);
  t.equal(
    second.output.filter((l) => l.includes('"msg":"conversion already processed"')).length >= 25,
    true,
    'recognised as processed',
  );
  t.notOk(
    second.output.some((l) => l.includes('"level":"error"')),
    'no processing errors after the restart',
  );
  second.child.kill('SIGTERM');
  t.equal(await second.exited, 0, 'a SIGTERM drains and exits 0');
});

t.test('two replicas share the consumer: each event once, both do work', async (t) => {
  const platform = await startPlatform(t);
  const { m, lineage } = await programme(platform, 6);
  const a = await startCommissions(t, platform, { env: { LOG_LEVEL: 'debug' } });
  const b = await startCommissions(t, platform, { env: { LOG_LEVEL: 'debug' } });
  const conversions = burst(lineage, 300);
  await recordConversions(platform.sql, m.id, conversions);
  await awaitProcessed(
    platform.sql,
    m.id,
    conversions.map((c) => c.event_id),
    60_000,
  );
  await consumerDrained(platform);
  await verifyExactlyOnce(t, platform, m.id, conversions, lineage);
  const worked = (logs: string[]) => logs.filter((l) => l.includes('"msg":"conversion processed"')).length;
  t.equal(worked(a.logs) + worked(b.logs), 300);
  t.ok(
    worked(a.logs) > 0 && worked(b.logs) > 0,
    `both replicas processed conversions (${worked(a.logs)} and ${worked(b.logs)})`,
  );
});

t.test('hold-period passes on two replicas at once approve each commission once', async (t) => {
  const platform = await startPlatform(t);
  const { m, lineage } = await programme(platform, 4);
  const clock = testClock();
  const a = await startCommissions(t, platform, { now: clock.now });
  const b = await startCommissions(t, platform, { now: clock.now });
  const conversions = burst(lineage, 600);
  await recordConversions(platform.sql, m.id, conversions);
  await awaitProcessed(
    platform.sql,
    m.id,
    conversions.map((c) => c.event_id),
    60_000,
  );
  const total = (
    await platform.sql<{ n: number }[]>`select count(*)::int as n from commissions where merchant_id = ${m.id}`
  )[0]!.n;

  clock.advance(30 * DAY_MS);
  const [byA, byB] = await Promise.all([a.service.approveEndedHolds(), b.service.approveEndedHolds()]);
  t.equal(byA + byB, total, `every commission approved by exactly one replica (${byA} + ${byB})`);
  const [outbox] = await platform.sql<{ n: number; distinct_ids: number }[]>`
    select count(*)::int as n, count(distinct data->>'commission_id')::int as distinct_ids
    from outbox where merchant_id = ${m.id} and type = 'commission.approved'`;
  t.same(outbox, { n: total, distinct_ids: total }, 'one commission.approved each');
  const pending = (
    await platform.sql<{ n: number }[]>`
    select count(*)::int as n from commissions where merchant_id = ${m.id} and status <> 'approved'`
  )[0]!.n;
  t.equal(pending, 0);
});
