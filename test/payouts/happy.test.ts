import t from 'tap';
import { startDispatcher } from '../helpers/webhooks.ts';
import { startReceiver, verifyWebhook } from '../helpers/receiver.ts';
import { eventually } from '../helpers/platform.ts';
import { awaitProcessed, conversion, recordConversions } from '../helpers/commissions.ts';
import {
  affiliate,
  approvedCommissions,
  payoutMerchant,
  payoutWebhooks,
  startPayoutsPlatform,
} from '../helpers/payouts.ts';

const { platform, service } = await startPayoutsPlatform(t);
await startDispatcher(t, platform);

const PAYOUT_FIELDS = [
  'id',
  'affiliate_id',
  'amount',
  'currency',
  'status',
  'method',
  'reference',
  'commission_ids',
  'commission_count',
  'period_start',
  'period_end',
  'created_at',
  'sent_at',
  'paid_at',
  'failed_at',
  'failure_reason',
  'held_reason',
  'exported_at',
  'adjustments',
  'adjustment_count',
  'adjustments_amount',
].sort();

/** Orders [affiliate_id, currency, …] rows. */
const byAffiliateAndCurrency = (a: unknown[], b: unknown[]) =>
  String(a[0]).localeCompare(String(b[0])) || String(a[1]).localeCompare(String(b[1]));

t.test(
  'three affiliates in two currencies: one payout per affiliate and currency, exact sums, none below min_payout',
  async (t) => {
    const m = await payoutMerchant(platform, ['min_payout="50"', 'tax_form_policy=none']);
    const ana = await affiliate(m, 'ana@example.com');
    const ben = await affiliate(m, 'ben@example.com');
    const cy = await affiliate(m, 'cy@example.com');
    // 10 percent, rounded half-even: 30.01 + 25.02 (25.025) = 55.03 USD; 60.00 EUR.
    const anaUsd = await approvedCommissions(platform, service, m.id, ana.id, [
      { amount: '300.10' },
      { amount: '250.25' },
    ]);
    const anaEur = await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '600.00', currency: 'EUR' }]);
    // 123.46 (123.456) + 0.10 (0.099) = 123.56 USD.
    const benUsd = await approvedCommissions(platform, service, m.id, ben.id, [
      { amount: '1234.56' },
      { amount: '0.99' },
    ]);
    // 40.00 USD: below min_payout.
    const cyUsd = await approvedCommissions(platform, service, m.id, cy.id, [{ amount: '400.00' }]);

    const created = await m.client.post('/api/v1/payouts', {});
    t.equal(created.status, 201);
    const payouts = created.body.data as any[];
    t.equal(payouts.length, 3);
    for (const p of payouts) t.same(Object.keys(p).sort(), PAYOUT_FIELDS, 'exactly the public fields');
    const summary = payouts
      .map((p) => [p.affiliate_id, p.currency, p.amount, p.status, p.held_reason, [...p.commission_ids].sort()])
      .sort(byAffiliateAndCurrency);
    const expected = [
      [ana.id, 'EUR', 60, 'pending', null, [...anaEur].sort()],
      [ana.id, 'USD', 55.03, 'pending', null, [...anaUsd].sort()],
      [ben.id, 'USD', 123.56, 'pending', null, [...benUsd].sort()],
    ].sort(byAffiliateAndCurrency);
    t.same(summary, expected);
    const stored = await platform.sql<{ currency: string; amount: string }[]>`
    select currency, amount::text from payouts where merchant_id = ${m.id} order by payouts.amount`;
    t.same(
      stored.map((r) => [r.currency, r.amount]),
      [
        ['USD', '55.0300'],
        ['EUR', '60.0000'],
        ['USD', '123.5600'],
      ],
      'stored exactly',
    );
    const cyPayouts = await m.client.get(`/api/v1/payouts?affiliate_id=${cy.id}`);
    t.same(cyPayouts.body, { data: [], next_cursor: null }, 'below min_payout: no payout');
    const [cyCommission] = await platform.sql`select status from commissions where id = ${cyUsd[0]!}`;
    t.equal(cyCommission!['status'], 'approved', 'and its commission waits, approved');

    const again = await m.client.post('/api/v1/payouts');
    t.equal(again.status, 201);
    t.same(again.body, { data: [], created_count: 0 }, 'a second run finds nothing left to group');

    const one = await m.client.get(`/api/v1/payouts/${payouts[0].id}`);
    t.equal(one.status, 200);
    t.same(one.body, payouts[0]);

    const page1 = await m.client.get('/api/v1/payouts?limit=2&status=pending');
    t.equal(page1.body.data.length, 2);
    t.ok(page1.body.next_cursor);
    const page2 = await m.client.get(`/api/v1/payouts?limit=2&status=pending&cursor=${page1.body.next_cursor}`);
    t.equal(page2.body.data.length, 1);
    t.equal(page2.body.next_cursor, null);
    t.same(
      new Set([...page1.body.data, ...page2.body.data].map((p: any) => p.id)),
      new Set(payouts.map((p) => p.id)),
      'pages cover every payout once',
    );
    t.same((await m.client.get('/api/v1/payouts?status=paid')).body.data, []);

    const named = await m.client.post('/api/v1/payouts', { affiliate_ids: [cy.id] });
    t.same(named.body, { data: [], created_count: 0 }, 'naming an affiliate below the minimum creates nothing');
  },
);

t.test(
  'pending → sent → paid: commissions paid, lifetime_commissions_paid raised, signed payout.sent and payout.paid',
  async (t) => {
    const m = await payoutMerchant(platform, ['tax_form_policy=none']);
    const { receiver, secret } = await payoutWebhooks(t, m);
    const ana = await affiliate(m, 'ana@example.com');
    const ids = await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '700.00' }, { amount: '0.15' }]);
    const eur = await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '900.00', currency: 'EUR' }]);
    const created = await m.client.post('/api/v1/payouts', { affiliate_ids: [ana.id] });
    const usd = created.body.data.find((p: any) => p.currency === 'USD');
    const eurPayout = created.body.data.find((p: any) => p.currency === 'EUR');
    t.equal(usd.amount, 70.02, '70.00 + 0.02 (0.015, half-even)');

    const sent = await m.client.patch(`/api/v1/payouts/${usd.id}`, {
      status: 'sent',
      method: 'manual',
      reference: 'BATCH-7',
    });
    t.equal(sent.status, 200);
    t.match(sent.body, { status: 'sent', method: 'manual', reference: 'BATCH-7', paid_at: null });
    t.ok(sent.body.sent_at);
    const paid = await m.client.patch(`/api/v1/payouts/${usd.id}`, { status: 'paid' });
    t.equal(paid.status, 200);
    t.match(paid.body, { status: 'paid', method: 'manual', reference: 'BATCH-7' });
    t.ok(paid.body.paid_at);
    const again = await m.client.patch(`/api/v1/payouts/${usd.id}`, { status: 'paid' });
    t.same(again.body, paid.body, 'the same move again changes nothing');

    for (const id of ids) {
      const c = await m.client.get(`/api/v1/commissions/${id}`);
      t.equal(c.body.status, 'paid', `commission ${id} paid`);
    }
    const eurCommission = await m.client.get(`/api/v1/commissions/${eur[0]}`);
    t.equal(eurCommission.body.status, 'approved', 'the other payout is untouched');
    const view = await m.client.get(`/api/v1/affiliates/${ana.id}`);
    t.equal(view.body.lifetime_commissions_paid, usd.amount);

    // A payout in another currency is counted in its own total, not in lifetime_commissions_paid.
    await m.client.patch(`/api/v1/payouts/${eurPayout.id}`, { status: 'sent' });
    await m.client.patch(`/api/v1/payouts/${eurPayout.id}`, { status: 'paid' });
    t.equal((await m.client.get(`/api/v1/affiliates/${ana.id}`)).body.lifetime_commissions_paid, usd.amount);
    const stats = await platform.sql<{ currency: string; commissions_paid: string }[]>`
    select currency, commissions_paid::text from affiliate_stats where affiliate_id = ${ana.id} order by currency`;
    t.same(
      stats.map((s) => [s.currency, Number(s.commissions_paid)]),
      [
        ['EUR', 90],
        ['USD', usd.amount],
      ],
    );

    const hooks = await eventually(async () => {
      const got = receiver.received.filter((r) => r.type.startsWith('payout.'));
      return got.length >= 4 ? got : undefined;
    });
    const events = hooks.map((h) => verifyWebhook(secret, h) as any);
    const forUsd = events.filter((e) => e.data.payout_id === usd.id);
    // One of each, in whichever order they arrive: an endpoint's deliveries run side by side (docs/WEBHOOKS.md).
    t.same(forUsd.map((e) => e.type).sort(), ['payout.paid', 'payout.sent']);
    const [sentEvent, paidEvent] = ['payout.sent', 'payout.paid'].map((type) => forUsd.find((e) => e.type === type));
    t.ok(sentEvent.created_at <= paidEvent.created_at, 'the payout was sent before it was paid');
    t.same(paidEvent.data, {
      payout_id: usd.id,
      affiliate_id: ana.id,
      amount: usd.amount,
      currency: 'USD',
      status: 'paid',
      commission_ids: [...ids].sort(),
      commission_count: ids.length,
    });
    t.equal(sentEvent.data.status, 'sent');
  },
);

t.test(
  'sent → failed: commissions approved again, eligible for the next payout, payout.failed with the reason',
  async (t) => {
    const m = await payoutMerchant(platform, ['tax_form_policy=none']);
    const receiver = await startReceiver(t);
    const endpoint = await m.client.post('/api/v1/webhook_endpoints', {
      url: receiver.url,
      event_types: ['payout.failed'],
    });
    const ana = await affiliate(m, 'ana@example.com');
    const ids = await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '800.00' }]);
    const [payout] = (await m.client.post('/api/v1/payouts')).body.data;
    await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'sent' });
    const failed = await m.client.patch(`/api/v1/payouts/${payout.id}`, {
      status: 'failed',
      failure_reason: 'account_closed',
    });
    t.equal(failed.status, 200);
    t.match(failed.body, { status: 'failed', failure_reason: 'account_closed', commission_ids: ids });
    t.ok(failed.body.failed_at);
    t.equal((await m.client.get(`/api/v1/commissions/${ids[0]}`)).body.status, 'approved');
    t.equal((await m.client.get(`/api/v1/affiliates/${ana.id}`)).body.lifetime_commissions_paid, 0);

    const hook = await eventually(async () => receiver.received.find((r) => r.type === 'payout.failed'));
    const event = verifyWebhook(endpoint.body.secret, hook) as any;
    t.same(event.data, {
      payout_id: payout.id,
      affiliate_id: ana.id,
      amount: 80,
      currency: 'USD',
      status: 'failed',
      commission_ids: ids,
      commission_count: 1,
      failure_reason: 'account_closed',
    });

    const next = await m.client.post('/api/v1/payouts');
    t.equal(next.body.data.length, 1, 'the released commissions make a new payout');
    t.same(next.body.data[0].commission_ids, ids);
    t.not(next.body.data[0].id, payout.id);
  },
);

t.test('pending → canceled releases the commissions; no webhook', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none']);
  const ana = await affiliate(m, 'ana@example.com');
  const ids = await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '800.00' }]);
  const [payout] = (await m.client.post('/api/v1/payouts')).body.data;
  const canceled = await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'canceled' });
  t.equal(canceled.status, 200);
  t.match(canceled.body, { status: 'canceled', commission_ids: ids });
  const [outbox] =
    await platform.sql`select count(*)::int as n from outbox where merchant_id = ${m.id} and type like 'payout.%'`;
  t.equal(outbox!['n'], 0);
  t.same((await m.client.post('/api/v1/payouts')).body.data[0].commission_ids, ids);
});

t.test('voiding a commission inside a pending payout takes it out of the amount; its history stays', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none']);
  const ana = await affiliate(m, 'ana@example.com');
  const ids = await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '500.00' }, { amount: '312.30' }]);
  const [payout] = (await m.client.post('/api/v1/payouts')).body.data;
  t.equal(payout.amount, 81.23);
  const voided = await m.client.patch(`/api/v1/commissions/${ids[0]}`, { status: 'voided', void_reason: 'chargeback' });
  t.equal(voided.status, 200);
  const after = await m.client.get(`/api/v1/payouts/${payout.id}`);
  const kept = ids.slice(1);
  t.match(after.body, { status: 'pending', commission_ids: [...ids].sort() }, 'the voided one stays listed');
  const [remaining] = await platform.sql`select amount::text from commissions where id = ${kept[0]!}`;
  t.equal(after.body.amount, Number(remaining!['amount']));

  const last = await m.client.patch(`/api/v1/commissions/${kept[0]}`, { status: 'voided' });
  t.equal(last.status, 200);
  const empty = await m.client.get(`/api/v1/payouts/${payout.id}`);
  t.match(
    empty.body,
    { status: 'canceled', amount: 0, commission_ids: [...ids].sort() },
    'a payout left empty is canceled',
  );
});

t.test('a refund takes its commission out of a pending payout; one in a sent payout stays', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none']);
  const ana = await affiliate(m, 'ana@example.com');
  const bo = await affiliate(m, 'bo@example.com');
  const [refunded, kept] = await approvedCommissions(platform, service, m.id, ana.id, [
    { amount: '600.00' },
    { amount: '400.00' },
  ]);
  const [inSent] = await approvedCommissions(platform, service, m.id, bo.id, [{ amount: '700.00' }]);
  const payouts = (await m.client.post('/api/v1/payouts')).body.data as any[];
  const pending = payouts.find((p) => p.affiliate_id === ana.id);
  const sent = payouts.find((p) => p.affiliate_id === bo.id);
  t.equal(pending.amount, 100);
  await m.client.patch(`/api/v1/payouts/${sent.id}`, { status: 'sent' });

  const orderOf = async (id: string) =>
    (await platform.sql<{ order_id: string }[]>`select order_id from commissions where id = ${id}`)[0]!.order_id;
  const refunds = [await orderOf(refunded!), await orderOf(inSent!)].map((externalId) =>
    conversion({ affiliate_id: null, event_type: 'refund', amount: '0', external_id: externalId }),
  );
  await recordConversions(platform.sql, m.id, refunds);
  await awaitProcessed(
    platform.sql,
    m.id,
    refunds.map((r) => r.event_id),
  );
  t.equal((await m.client.get(`/api/v1/commissions/${refunded}`)).body.status, 'voided');
  t.match((await m.client.get(`/api/v1/payouts/${pending.id}`)).body, {
    status: 'pending',
    amount: 40,
    commission_ids: [refunded, kept].sort(),
  });
  t.match(
    (await m.client.get(`/api/v1/commissions/${inSent}`)).body,
    { status: 'approved', void_requested_at: String },
    'in a sent payout: kept, the refund recorded',
  );
  t.match((await m.client.get(`/api/v1/payouts/${sent.id}`)).body, { status: 'sent', amount: 70 });
});
