import { parse } from 'csv-parse/sync';
import t from 'tap';
import { newId } from '@platform/shared/ids';
import {
  CREATED_PAYOUTS_MAX,
  PAYOUT_ADJUSTMENTS_MAX,
  PAYOUT_COMMISSION_IDS_MAX,
} from '@platform/shared/schemas/payouts';
import { awaitProcessed, conversion, recordConversions, startCommissions, testClock } from '../helpers/commissions.ts';
import { affiliate, payoutMerchant, payoutWebhooks } from '../helpers/payouts.ts';
import { eventually, startPlatform } from '../helpers/platform.ts';
import { startReceiver, verifyWebhook } from '../helpers/receiver.ts';
import { startDispatcher } from '../helpers/webhooks.ts';
import { putPayoutDetails } from '../tax-forms/setup.ts';

/**
 * A payout of 40,000 commissions. Its answers and payout.* webhooks used to carry every commission id: past ~31k
 * the outbox row exceeded NATS's max_payload, the relay retried it at the head of the one outbox forever (every
 * merchant's events waited), and a GET of the payout threw inside `respond` and ended the commissions process. Now
 * a payout carries commission_count and the first PAYOUT_COMMISSION_IDS_MAX ids, and
 * GET /api/v1/payouts/{id}/commissions pages through all of them. The commissions are inserted with SQL, approved,
 * for one affiliate, as the pipeline would leave them (40,000 conversions through it would take minutes here).
 */
t.setTimeout(120_000);

const COUNT = 40_000;
// Grouping or paying 40,000 commissions takes about a second on a quiet machine, several on a busy one: the API's
// deadline and the statement timeout below it are raised so that the test checks the outcome, not the machine's load.
const platform = await startPlatform(t, {
  env: { RPC_TIMEOUT_MS: '30000', DATABASE_STATEMENT_TIMEOUT_MS: '25000' },
});
await startCommissions(t, platform, { now: testClock().now });
await startDispatcher(t, platform);
const m = await payoutMerchant(platform, ['tax_form_policy=none']);
const { receiver, secret } = await payoutWebhooks(t, m);
const ana = await affiliate(m, 'ana@example.com');
const details = await putPayoutDetails(m.client, ana.id, { method: 'paypal', paypal_email: 'ana.pay@example.com' });
if (details.status !== 200) throw new Error(`payout details answered ${details.status}: ${details.text}`);

// Another merchant whose events must keep flowing meanwhile: its affiliate.created webhooks go to its own receiver.
const other = await payoutMerchant(platform, ['tax_form_policy=none']);
const otherHooks = await startReceiver(t);
const otherEndpoint = await other.client.post('/api/v1/webhook_endpoints', {
  url: otherHooks.url,
  event_types: ['affiliate.created'],
});
if (otherEndpoint.status !== 201) throw new Error(`creating the endpoint answered ${otherEndpoint.status}`);

/** Inserts `count` approved commissions of the affiliate (amounts 1.00 to 10.96); answers their ids and exact sum. */
async function insertApproved(affiliateId: string, count: number): Promise<string[] & { cents: number }> {
  const ids: string[] = [];
  const amounts: string[] = [];
  const createdAt: string[] = [];
  let cents = 0;
  const start = Date.now() - count - 60_000;
  for (let i = 0; i < count; i++) {
    const c = 100 + ((i * 7919) % 997);
    cents += c;
    ids.push(newId('com'));
    amounts.push((c / 100).toFixed(2));
    createdAt.push(new Date(start + i).toISOString());
  }
  await platform.sql`
    insert into commissions (id, merchant_id, affiliate_id, event_id, order_id, level, rate, amount, currency, status,
                             created_at, approved_at)
    select c.id, ${m.id}, ${affiliateId}, 'evt_' || substr(c.id, 5), 'order_' || c.n, 0, 0.1, c.amount::numeric,
           'USD', 'approved', c.created_at::timestamptz, c.created_at::timestamptz
    from unnest(${ids}::text[], ${amounts}::text[], ${createdAt}::text[])
      with ordinality as c(id, amount, created_at, n)`;
  // What autovacuum would do after such an insert (it is off on the test server): the planner needs the counts.
  await platform.sql`analyze commissions`;
  return Object.assign(ids, { cents });
}
const ids = await insertApproved(ana.id, COUNT);
// The exact sum, from integer cents: 2 decimals as the CSV writes it.
const total = (ids.cents / 100).toFixed(2);

/** Another merchant's event, written now: how long until the relays published it (outbox.published_at). */
const otherMerchantEventLatency = async (label: string) => {
  const res = await other.client.post('/api/v1/affiliates', { email: `${label}@example.com` });
  if (res.status !== 201) throw new Error(`creating an affiliate answered ${res.status}: ${res.text}`);
  return eventually(
    async () => {
      const [row] = await platform.sql<{ ms: number | null }[]>`
        select (extract(epoch from published_at - created_at) * 1000)::float8 as ms from outbox
        where merchant_id = ${other.id} and type = 'affiliate.created' and data->>'id' = ${res.body.id as string}`;
      return row?.ms ?? undefined;
    },
    10_000,
    `the ${label} affiliate.created event published`,
  );
};

let payout: any;

t.test('created: one payout, its exact amount, commission_count and a bounded first page of ids', async (t) => {
  const created = await m.client.post('/api/v1/payouts', {});
  t.equal(created.status, 201);
  t.equal(created.body.data.length, 1);
  payout = created.body.data[0];
  t.match(payout, { affiliate_id: ana.id, currency: 'USD', status: 'pending', commission_count: COUNT });
  t.equal(payout.amount.toFixed(2), total, 'the exact sum of 40,000 commissions');
  t.same(payout.commission_ids, [...ids].sort().slice(0, PAYOUT_COMMISSION_IDS_MAX), 'the first ids, by id');
  t.ok(created.text.length < 10_000, `the answer is small (${created.text.length} bytes)`);
});

t.test('fetched and listed: the same bounded payout; its commissions paged, every one once', async (t) => {
  const one = await m.client.get(`/api/v1/payouts/${payout.id}`);
  t.equal(one.status, 200, 'a GET answers (it used to end the commissions process)');
  t.same(one.body, payout);
  const list = await m.client.get('/api/v1/payouts?limit=100');
  t.equal(list.status, 200);
  t.same(list.body.data, [payout]);

  const first = await m.client.get(`/api/v1/payouts/${payout.id}/commissions?limit=100`);
  t.equal(first.status, 200);
  t.equal(first.body.data.length, 100);
  t.match(first.body.data[0], { affiliate_id: ana.id, status: 'approved', currency: 'USD' });
  const newest = [...ids].sort().reverse();
  t.same(
    first.body.data.map((c: any) => c.id),
    newest.slice(0, 100),
    'newest first (ids sort by time), like every list',
  );
  const second = await m.client.get(
    `/api/v1/payouts/${payout.id}/commissions?limit=100&cursor=${first.body.next_cursor}`,
  );
  t.same(
    second.body.data.map((c: any) => c.id),
    newest.slice(100, 200),
    'the next page follows without a gap',
  );
  const [linked] = await platform.sql<{ n: number }[]>`
    select count(*)::int as n from payout_commissions where merchant_id = ${m.id} and payout_id = ${payout.id}`;
  t.equal(linked!.n, COUNT, 'commission_count is what the payout holds');
});

t.test('exported, sent and paid: signed webhooks with the count, and another merchant never waits', async (t) => {
  const csv = await m.client.get('/api/v1/payouts/export?status=pending');
  t.equal(csv.status, 200);
  const rows: string[][] = parse(csv.text);
  t.same(
    rows.map((r) => [r[0], r[1], r[2], r[3]]),
    [['ana.pay@example.com', total, 'USD', payout.id]],
  );

  const sent = await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'sent', reference: 'BATCH-40K' });
  t.equal(sent.status, 200);
  t.match(sent.body, { status: 'sent', commission_count: COUNT });
  const latency = await otherMerchantEventLatency('during-sent');
  t.ok(latency < 1000, `another merchant's event was published ${latency.toFixed(0)} ms after its commit`);

  const paid = await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'paid' });
  t.equal(paid.status, 200);
  t.match(paid.body, { status: 'paid', commission_count: COUNT });
  const [counts] = await platform.sql<{ paid: number }[]>`
    select count(*)::int as paid from commissions where merchant_id = ${m.id} and status = 'paid'`;
  t.equal(counts!.paid, COUNT, 'every commission paid');
  const view = await m.client.get(`/api/v1/affiliates/${ana.id}`);
  t.equal(view.body.lifetime_commissions_paid.toFixed(2), total);
  const after = await otherMerchantEventLatency('during-paid');
  t.ok(after < 1000, `and again after the payout was paid (${after.toFixed(0)} ms)`);

  const hooks = await eventually(
    async () => (receiver.received.length >= 2 ? receiver.received : undefined),
    20_000,
    'payout.sent and payout.paid at the receiver',
  );
  const events = hooks.map((h) => verifyWebhook(secret, h) as any);
  // In whichever order they arrive: an endpoint's deliveries run side by side (docs/WEBHOOKS.md).
  t.same(events.map((e) => e.type).sort(), ['payout.paid', 'payout.sent']);
  for (const e of events) {
    t.match(e.data, { payout_id: payout.id, amount: payout.amount, commission_count: COUNT });
    t.same(e.data.commission_ids, payout.commission_ids, `${e.type}: the same bounded ids`);
  }
  t.ok(
    hooks.every((h) => h.body.length < 10_000),
    'small bodies',
  );
  const [aside] = await platform.sql<{ n: number }[]>`
    select count(*)::int as n from outbox where set_aside_at is not null`;
  t.equal(aside!.n, 0, 'no outbox row had to be set aside');
  await eventually(
    async () => (otherHooks.received.length >= 2 ? true : undefined),
    10_000,
    "the other merchant's webhooks",
  );
});

t.test('a payout of a few pages: every commission once, newest first, then the end', async (t) => {
  const ben = await affiliate(m, 'ben@example.com');
  const benIds = await insertApproved(ben.id, 250);
  const created = await m.client.post('/api/v1/payouts', { affiliate_ids: [ben.id] });
  t.equal(created.status, 201);
  const small = created.body.data[0];
  t.equal(small.commission_count, 250);
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: any = await m.client.get(
      `/api/v1/payouts/${small.id}/commissions?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
    );
    t.equal(page.status, 200);
    seen.push(...page.body.data.map((c: any) => c.id));
    cursor = page.body.next_cursor;
    pages++;
  } while (cursor);
  t.equal(pages, 3);
  t.same(seen, [...benIds].sort().reverse(), 'every commission once, in order');
  const foreign = await other.client.get(`/api/v1/payouts/${small.id}/commissions`);
  t.equal(foreign.status, 404, "another merchant's payout is not found");
  t.equal(foreign.body.error.code, 'NOT_FOUND');
});

t.test('a run that creates more payouts than one answer holds: the first ones and the count', async (t) => {
  const many = await payoutMerchant(platform, ['tax_form_policy=none']);
  const AFFILIATES = 150;
  const affiliateIds = Array.from({ length: AFFILIATES }, () => newId('aff'));
  const commissionIds = affiliateIds.map(() => newId('com'));
  await platform.sql`
    insert into affiliates (id, merchant_id, slug, email, display_name, status)
    select a.id, ${many.id}, 'a' || a.n, 'a' || a.n || '@example.com', 'Affiliate ' || a.n, 'approved'
    from unnest(${affiliateIds}::text[]) with ordinality as a(id, n)`;
  await platform.sql`
    insert into commissions (id, merchant_id, affiliate_id, event_id, order_id, level, rate, amount, currency, status,
                             created_at, approved_at)
    select c.id, ${many.id}, c.affiliate_id, 'evt_' || substr(c.id, 5), 'order_' || c.n, 0, 0.1, 60, 'USD',
           'approved', now(), now()
    from unnest(${commissionIds}::text[], ${affiliateIds}::text[]) with ordinality as c(id, affiliate_id, n)`;
  const created = await many.client.post('/api/v1/payouts', {});
  t.equal(created.status, 201);
  t.equal(created.body.created_count, AFFILIATES, 'every payout counted');
  t.equal(created.body.data.length, CREATED_PAYOUTS_MAX, 'the first ones shown');
  t.same(
    created.body.data.map((p: any) => p.affiliate_id),
    [...affiliateIds].sort().slice(0, CREATED_PAYOUTS_MAX),
    'by affiliate',
  );
  const [stored] = await platform.sql<{ n: number }[]>`
    select count(*)::int as n from payouts where merchant_id = ${many.id} and status = 'pending'`;
  t.equal(stored!.n, AFFILIATES, 'and every one stored');
  const first = await many.client.get('/api/v1/payouts?status=pending&limit=100');
  const second = await many.client.get(`/api/v1/payouts?status=pending&limit=100&cursor=${first.body.next_cursor}`);
  t.equal(first.body.data.length + second.body.data.length, AFFILIATES, 'the list holds them all');
});

t.test("a commission refunded after its payout was paid: the payout's list shows its clawback", async (t) => {
  const newestId = [...ids].sort().reverse()[0]!;
  const refund = conversion({
    affiliate_id: null,
    event_type: 'refund',
    amount: '0',
    external_id: `order_${ids.indexOf(newestId) + 1}`,
  });
  await recordConversions(platform.sql, m.id, [refund]);
  await awaitProcessed(platform.sql, m.id, [refund.event_id]);
  const page = await m.client.get(`/api/v1/payouts/${payout.id}/commissions?limit=1`);
  t.equal(page.status, 200);
  t.match(page.body.data, [
    { id: newestId, status: 'voided', void_reason: 'refund', clawback: { payout_id: payout.id } },
  ]);
  const again = await m.client.get(`/api/v1/payouts/${payout.id}`);
  t.equal(again.body.commission_count, COUNT, 'the paid payout keeps its history');
});

t.test('a payout deducting many clawbacks lists the first adjustments and counts them all', async (t) => {
  // Clawbacks of 59 more of Ana's paid commissions (one is already clawed back above), 0.01 each, as refunds after
  // the paid payout leave them: the next payout deducts all 60.
  const clawed = [...ids].sort().reverse().slice(1, 60);
  await platform.sql`update commissions set status = 'voided', void_reason = 'refund', voided_at = now()
                     where merchant_id = ${m.id} and id = any(${clawed})`;
  await platform.sql`
    insert into payout_clawbacks (merchant_id, commission_id, affiliate_id, payout_id, amount, currency, created_at)
    select ${m.id}, c.id, ${ana.id}, ${payout.id}, 0.01, 'USD', now() - (c.n || ' seconds')::interval
    from unnest(${clawed}::text[]) with ordinality as c(id, n)`;
  const [owed] = await platform.sql<{ n: number; sum: string }[]>`
    select count(*)::int as n, sum(amount)::text as sum from payout_clawbacks where merchant_id = ${m.id}`;
  const fresh = await insertApproved(ana.id, 100);
  const created = await m.client.post('/api/v1/payouts', { affiliate_ids: [ana.id] });
  t.equal(created.status, 201);
  const next = created.body.data[0];
  t.equal(next.adjustment_count, owed!.n, `every clawback deducted (${owed!.n})`);
  t.equal(next.adjustments.length, PAYOUT_ADJUSTMENTS_MAX, 'the answer lists the first ones only');
  t.equal(next.adjustments_amount.toFixed(4), (-Number(owed!.sum)).toFixed(4), 'their sum counts them all');
  t.equal(
    next.amount.toFixed(2),
    (fresh.cents / 100 + next.adjustments_amount).toFixed(2),
    "amount is the commissions' sum plus adjustments_amount",
  );
  const fetched = await m.client.get(`/api/v1/payouts/${next.id}`);
  t.same(fetched.body, next, 'a GET answers the same bounded payout');
});
