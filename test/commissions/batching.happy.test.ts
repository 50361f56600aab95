import t from 'tap';
import postgres from 'postgres';
import type { ConversionRecorded } from '@platform/shared/catalogue';
import { processConversions, type ProcessOutcome } from '@platform/commissions/process';
import type { ConversionEnvelope } from '@platform/commissions/domain/envelope';
import { newId } from '@platform/shared/ids';
import { startPlatform } from '../helpers/platform.ts';
import { conversion, createAffiliate, createTier, setMerchantSettings, testClock } from '../helpers/commissions.ts';

/**
 * A batch of conversions that share no order, visit, IP hash or affiliate is processed with one statement per step
 * for all of them (process.ts processTogether). It must change exactly what processing each conversion alone
 * changes: two merchants with the same programme get the same conversions, one merchant's in one call, the other's
 * one call per conversion, and every outcome, commission, fraud flag, revenue total, tier and outbox event is
 * compared. Only the services' own code runs, on the test's Postgres.
 */

const platform = await startPlatform(t);
const clock = testClock();
const ctx = { now: clock.now, publicBaseUrl: 'http://localhost:8080' };

type Role = 'root' | 'child' | 'grandchild' | 'solo' | 'selfish' | 'euro' | 'suspended';

async function programme() {
  const m = await platform.merchant();
  await setMerchantSettings(platform.sql, m.id, ['default_rate=0.1', 'level_rates=[0.5,0.2]']);
  const silver = await createTier(platform.sql, m.id, { name: 'Silver', rate: '0.15', threshold: '150' });
  const ids = new Map<Role, string>();
  ids.set('root', (await createAffiliate(m.client, { email: 'root@example.com' })).id);
  ids.set(
    'child',
    (await createAffiliate(m.client, { email: 'child@example.com', parent_email: 'root@example.com' })).id,
  );
  ids.set(
    'grandchild',
    (await createAffiliate(m.client, { email: 'grandchild@example.com', parent_email: 'child@example.com' })).id,
  );
  ids.set('solo', (await createAffiliate(m.client, { email: 'solo@example.com' })).id);
  ids.set('selfish', (await createAffiliate(m.client, { email: 'selfish@example.com' })).id);
  ids.set('euro', (await createAffiliate(m.client, { email: 'euro@example.com' })).id);
  const suspended = (await createAffiliate(m.client, { email: 'suspended@example.com' })).id;
  ids.set('suspended', suspended);
  const patched = await m.client.patch(`/api/v1/affiliates/${suspended}`, { status: 'suspended' });
  if (patched.status !== 200) throw new Error(`suspending answered ${patched.status}`);
  return {
    merchantId: m.id,
    ids,
    roleOf: new Map([...ids].map(([role, id]) => [id, role])),
    silverId: silver!['id'] as string,
  };
}

/** Independent conversions: each of its own affiliate, order, visit and IP hash. */
function conversionsFor(ids: Map<Role, string>): ConversionRecorded[] {
  const at = clock.now().toISOString();
  const visit = (n: number) => ({ id: newId('vis'), ip_hash: `ip-${n}-${newId('req')}`, fingerprint: null });
  return [
    conversion({ affiliate_id: ids.get('grandchild')!, amount: '250.00', visit: visit(1), created_at: at }),
    conversion({ affiliate_id: ids.get('solo')!, amount: '200.00', visit: visit(2), created_at: at }),
    conversion({
      affiliate_id: ids.get('selfish')!,
      amount: '100.00',
      visit: visit(3),
      customer_email: 'SELFISH@example.com',
      created_at: at,
    }),
    conversion({ affiliate_id: ids.get('euro')!, amount: '80.00', currency: 'EUR', visit: visit(4), created_at: at }),
    conversion({ affiliate_id: ids.get('suspended')!, amount: '90.00', visit: visit(5), created_at: at }),
    conversion({ affiliate_id: ids.get('child')!, amount: '0.05', visit: null, created_at: at }),
  ];
}

const envelope = (merchantId: string, data: ConversionRecorded): ConversionEnvelope => ({
  id: newId('msg'),
  type: 'conversion.recorded',
  created_at: data.created_at,
  merchant_id: merchantId,
  data,
});

/** Everything the conversions changed, with affiliates named by role and events by their position. */
async function effects(merchantId: string, roleOf: Map<string, Role>, events: ConversionRecorded[], silverId: string) {
  const sql = platform.sql;
  const position = new Map(events.map((e, i) => [e.event_id, i]));
  const commissions = await sql<
    {
      event_id: string;
      affiliate_id: string;
      level: number;
      amount: string;
      rate: string | null;
      status: string;
      held: boolean;
      created_at: Date;
    }[]
  >`
    select event_id, affiliate_id, level, amount::text, rate::text, status, held, created_at
    from commissions where merchant_id = ${merchantId}`;
  const flags = await sql<{ event_id: string; affiliate_id: string; rule: string; details: unknown }[]>`
    select event_id, affiliate_id, rule, details from fraud_flags where merchant_id = ${merchantId}`;
  const stats = await sql<
    { affiliate_id: string; currency: string; attributed_revenue: string; conversions: number }[]
  >`
    select affiliate_id, currency, attributed_revenue::text, conversions from affiliate_stats where merchant_id = ${merchantId}`;
  const processed = await sql<{ event_id: string; revenue_counted: string | null; revenue_reversed: boolean }[]>`
    select event_id, revenue_counted::text, revenue_reversed from processed_conversions where merchant_id = ${merchantId}`;
  const tiers = await sql<
    { id: string; tier_id: string | null }[]
  >`select id, tier_id from affiliates where merchant_id = ${merchantId}`;
  const outbox = await sql<{ type: string; data: Record<string, unknown> }[]>`
    select type, data from outbox where merchant_id = ${merchantId} and type <> 'affiliate.created' and type <> 'affiliate.updated'`;
  const sorted = <T>(rows: T[]) => rows.map((r) => JSON.stringify(r)).sort();
  return {
    commissions: sorted(
      commissions.map((c) => ({
        ...c,
        event_id: position.get(c.event_id),
        affiliate_id: roleOf.get(c.affiliate_id),
        created_at: c.created_at.toISOString(),
      })),
    ),
    flags: sorted(
      flags.map((f) => ({ ...f, event_id: position.get(f.event_id), affiliate_id: roleOf.get(f.affiliate_id) })),
    ),
    stats: sorted(stats.map((s) => ({ ...s, affiliate_id: roleOf.get(s.affiliate_id) }))),
    processed: sorted(processed.map((p) => ({ ...p, event_id: position.get(p.event_id) }))),
    tiers: sorted(tiers.map((a) => ({ affiliate: roleOf.get(a.id), silver: a.tier_id === silverId }))),
    outbox: sorted(
      outbox.map((o) => ({
        type: o.type,
        event: position.get(o.data['event_id'] as string) ?? null,
        affiliate: roleOf.get((o.data['affiliate_id'] ?? o.data['id']) as string) ?? null,
        level: o.data['level'] ?? null,
        amount: o.data['amount'] ?? null,
        rule: o.data['rule'] ?? null,
      })),
    ),
  };
}

t.test('independent conversions processed in one batch change exactly what each processed alone changes', async (t) => {
  const together = await programme();
  const alone = await programme();
  const togetherEvents = conversionsFor(together.ids);
  const aloneEvents = conversionsFor(alone.ids);

  const batchOutcomes = await processConversions(
    platform.sql,
    togetherEvents.map((e) => envelope(together.merchantId, e)),
    ctx,
  );
  const singleOutcomes: ProcessOutcome[] = [];
  for (const e of aloneEvents)
    singleOutcomes.push(...(await processConversions(platform.sql, [envelope(alone.merchantId, e)], ctx)));

  t.same(batchOutcomes, singleOutcomes, 'the same outcome for each conversion');
  t.same(
    batchOutcomes.map((o) => o.kind),
    ['processed', 'processed', 'processed', 'processed', 'processed', 'processed'],
  );
  t.match(batchOutcomes[1], { promoted: true }, 'the solo affiliate crossed the Silver threshold');
  t.match(batchOutcomes[2], { flags: 1 }, 'the self-referral is flagged');
  const [a, b] = [
    await effects(together.merchantId, together.roleOf, togetherEvents, together.silverId),
    await effects(alone.merchantId, alone.roleOf, aloneEvents, alone.silverId),
  ];
  t.same(a, b, 'the same commissions, flags, revenue, tiers and outbox events');
  // The suspended affiliate earns nothing, and the child's 0.005 rounds to nothing.
  t.equal(a.commissions.length, 3 + 1 + 1 + 1, 'three levels for the grandchild, one each for solo, selfish and euro');

  // The same messages again, in one batch: every one is a duplicate and nothing changes.
  const again = await processConversions(
    platform.sql,
    togetherEvents.map((e) => envelope(together.merchantId, e)),
    ctx,
  );
  t.same(
    again.map((o) => o.kind),
    togetherEvents.map(() => 'duplicate'),
  );
  t.same(await effects(together.merchantId, together.roleOf, togetherEvents, together.silverId), a, 'nothing changed');
});

t.test('a batch mixing dependent and independent conversions: the dependent ones see the earlier ones', async (t) => {
  const p = await programme();
  await setMerchantSettings(platform.sql, p.merchantId, ['fraud_max_conversions_per_hour=2']);
  const at = clock.now().toISOString();
  const visit = { id: newId('vis'), ip_hash: `ip-shared-${newId('req')}`, fingerprint: null };
  // Three conversions of one visit (the third trips the velocity rule), an independent one, and a refund of the
  // first order: all in one batch.
  const first = conversion({ affiliate_id: p.ids.get('solo')!, amount: '10.00', visit, created_at: at });
  const events: ConversionRecorded[] = [
    first,
    conversion({ affiliate_id: p.ids.get('solo')!, amount: '10.00', visit, created_at: at }),
    conversion({ affiliate_id: p.ids.get('grandchild')!, amount: '20.00', created_at: at }),
    conversion({ affiliate_id: p.ids.get('solo')!, amount: '10.00', visit, created_at: at }),
    conversion({
      affiliate_id: p.ids.get('solo')!,
      event_type: 'refund',
      external_id: first.external_id,
      amount: '10.00',
      created_at: at,
    }),
  ];
  const outcomes = await processConversions(
    platform.sql,
    events.map((e) => envelope(p.merchantId, e)),
    ctx,
  );
  t.same(
    outcomes.map((o) => o.kind),
    ['processed', 'processed', 'processed', 'processed', 'processed'],
  );
  t.match(outcomes[3], { flags: 1 }, 'the third conversion of the visit trips conversion_velocity');
  t.match(outcomes[4], { voided: 1 }, "the refund voids the first order's commission");
  const [stats] = await platform.sql<{ attributed_revenue: string; conversions: number }[]>`
    select attributed_revenue::text, conversions from affiliate_stats
    where merchant_id = ${p.merchantId} and affiliate_id = ${p.ids.get('solo')!} and currency = 'USD'`;
  t.same(
    stats,
    { attributed_revenue: '10.00', conversions: 1 },
    'two clean conversions counted, the refunded one taken back',
  );
});

t.test(
  'unattributed conversions of a batch are claimed in one statement, and found processed when redelivered',
  async (t) => {
    const m = await platform.merchant();
    // A pool of its own that notes every statement it sends.
    const statements: string[] = [];
    const counting = postgres(platform.databaseUrl, {
      max: 1,
      onnotice: () => {},
      debug: (_connection, query) => void statements.push(query),
    });
    t.teardown(() => counting.end({ timeout: 1 }));
    const claimsSent = () => statements.filter((q) => /insert into processed_conversions/.test(q)).length;

    const at = clock.now().toISOString();
    const events = Array.from({ length: 5 }, (_, n) =>
      conversion({
        affiliate_id: null,
        amount: '30.00',
        visit: { id: newId('vis'), ip_hash: `ip-none-${n}-${newId('req')}`, fingerprint: null },
        created_at: at,
      }),
    );
    const outcomes = await processConversions(
      counting,
      events.map((e) => envelope(m.id, e)),
      ctx,
    );
    t.same(
      outcomes,
      events.map(() => ({ kind: 'processed', created: 0, voided: 0, flags: 0, promoted: false })),
    );
    t.equal(claimsSent(), 1, 'one claiming statement for the five conversions');
    const rows = await platform.sql<
      { event_id: string; affiliate_id: string | null; revenue_counted: string | null }[]
    >`
    select event_id, affiliate_id, revenue_counted::text from processed_conversions where merchant_id = ${m.id}`;
    t.same(
      rows.map((r) => [r.event_id, r.affiliate_id, r.revenue_counted]).sort(),
      events.map((e) => [e.event_id, null, null]).sort(),
      'each claimed once, counting no revenue',
    );
    t.equal((await platform.sql`select 1 from commissions where merchant_id = ${m.id}`).length, 0, 'no commissions');

    const again = await processConversions(
      counting,
      events.map((e) => envelope(m.id, e)),
      ctx,
    );
    t.same(
      again.map((o) => o.kind),
      events.map(() => 'duplicate'),
    );
    t.equal(claimsSent(), 2, 'the redelivered batch in one statement too');
  },
);
