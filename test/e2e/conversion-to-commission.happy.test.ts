import t from 'tap';
import { startCommissions } from '../helpers/commissions.ts';
import { eventually, sleep } from '../helpers/platform.ts';
import { clickReferralLink, createAffiliate, setSettings, startWithEvents } from '../events/setup.ts';

// The whole path a merchant relies on, across services and streams: a referral click, the merchant's POST /events
// with the cookie, the events service's outbox, the CONVERSIONS stream, the commissions service, GET /commissions.
t.setTimeout(180_000);
const { platform } = await startWithEvents(t);
await startCommissions(t, platform);
const merchant = await platform.merchant();
await setSettings(platform.sql, merchant.id, {
  landing_url: 'https://shop.example.com/',
  default_rate: 0.1,
  level_rates: [0.5],
});
const lead = await createAffiliate(merchant.client, 'lead@example.com');
const jane = await createAffiliate(merchant.client, 'jane@example.com', {
  parent_email: 'lead@example.com',
  slug: 'jane',
});

const commissionsOf = async (orderId: string) => {
  const res = await merchant.client.get(`/api/v1/commissions?affiliate_id=${jane.id}&limit=100`);
  t.equal(res.status, 200);
  const direct = (res.body.data as { order_id: string }[]).filter((c) => c.order_id === orderId);
  const parent = (await merchant.client.get(`/api/v1/commissions?affiliate_id=${lead.id}&limit=100`)).body.data.filter(
    (c: { order_id: string }) => c.order_id === orderId,
  );
  return [...direct, ...parent];
};

t.test('a referral click and the merchant event become commissions readable through the API', async (t) => {
  const visitId = await clickReferralLink(platform.baseUrl, merchant.id, 'jane');
  const event = await merchant.client.post('/api/v1/events', {
    event_type: 'purchase',
    external_id: 'order-1',
    cookie_id: visitId,
    amount: 120.5,
    currency: 'USD',
  });
  t.equal(event.status, 201);
  t.match(event.body, { affiliate_id: jane.id, attributed_by: 'cookie' });

  const commissions = await eventually(
    async () => {
      const rows = await commissionsOf('order-1');
      return rows.length === 2 ? rows : undefined;
    },
    10_000,
    'the commissions of order-1',
  );
  const byLevel = Object.fromEntries(commissions.map((c: { level: number }) => [c.level, c]));
  t.match(byLevel[0], {
    affiliate_id: jane.id,
    amount: 12.05,
    currency: 'USD',
    status: 'pending',
    event_id: event.body.id,
    level: 0,
  });
  // 12.05 × 0.5 = 6.025, rounded half-even to the cent.
  t.match(byLevel[1], {
    affiliate_id: lead.id,
    amount: 6.02,
    currency: 'USD',
    status: 'pending',
    event_id: event.body.id,
    level: 1,
  });
});

t.test('50 concurrent identical POSTs: one event, one set of commissions', async (t) => {
  const visitId = await clickReferralLink(platform.baseUrl, merchant.id, 'jane');
  const body = { event_type: 'purchase', external_id: 'order-2', cookie_id: visitId, amount: 40, currency: 'USD' };
  const responses = await Promise.all(Array.from({ length: 50 }, () => merchant.client.post('/api/v1/events', body)));
  const statuses = responses.map((r) => r.status).sort();
  t.equal(statuses.filter((s) => s === 201).length, 1, 'one of them recorded the event');
  t.equal(statuses.filter((s) => s === 200).length, 49, 'the others got the same record');
  t.equal(new Set(responses.map((r) => r.body.id)).size, 1, 'one event id');

  await eventually(
    async () => ((await commissionsOf('order-2')).length === 2 ? true : undefined),
    10_000,
    'the commissions of order-2',
  );
  // Give any duplicate a chance to appear before counting.
  await sleep(1500);
  const [{ count }] =
    (await platform.sql`select count(*)::int as count from commissions where merchant_id = ${merchant.id} and order_id = 'order-2'`) as unknown as [
      { count: number },
    ];
  t.equal(count, 2, 'one commission per level, no more');
});

t.test('a refund naming only the order voids its commissions through the same path', async (t) => {
  const refund = await merchant.client.post('/api/v1/events', { event_type: 'refund', external_id: 'order-1' });
  t.equal(refund.status, 201);
  t.match(refund.body, {
    event_type: 'refund',
    external_id: 'order-1',
    cookie_id: null,
    coupon: null,
    affiliate_id: null,
  });
  const voided = await eventually(
    async () => {
      const rows = await commissionsOf('order-1');
      return rows.every((c: { status: string }) => c.status === 'voided') && rows.length === 2 ? rows : undefined;
    },
    10_000,
    'the voided commissions of order-1',
  );
  t.same(
    voided.map((c: { void_reason: string }) => c.void_reason),
    ['refund', 'refund'],
  );
});
