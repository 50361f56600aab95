import t from 'tap';
import { Value } from '@sinclair/typebox/value';
import { ConversionRecordedSchema } from '@platform/shared/catalogue';
import { newId } from '@platform/shared/ids';
import { eventually } from '../helpers/platform.ts';
import {
  clickReferralLink,
  conversionMessages,
  createAffiliate,
  createCoupon,
  setSettings,
  startWithEvents,
} from './setup.ts';

const { platform } = await startWithEvents(t);
const { sql } = platform;
const merchant = await platform.merchant();
const { client } = merchant;
await setSettings(sql, merchant.id, { landing_url: 'https://shop.example.com/welcome' });
const jane = await createAffiliate(client, 'jane@example.com');
const max = await createAffiliate(client, 'max@example.com');
await createCoupon(client, jane.id, 'JANE10');
await createCoupon(client, max.id, 'MAX-5');

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * Makes a visit `days` old, as time passing would: its created_at and the time its id carries move together
 * (attribution reads a visit only around the time its id was made). Answers the id it then has.
 */
async function ageVisit(id: string, days: number): Promise<string> {
  const aged = newId('vis', Date.now() - days * 86_400_000);
  await sql`update visits set id = ${aged}, created_at = now() - make_interval(days => ${days})
            where merchant_id = ${merchant.id} and id = ${id}`;
  return aged;
}

async function outboxRowsFor(eventId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from outbox where type = 'conversion.recorded' and data ->> 'event_id' = ${eventId}`;
  return row!.n;
}

t.test(
  'a visit through a referral link, then an event with its cookie: attributed by cookie and published once',
  async (t) => {
    const visitId = await clickReferralLink(platform.baseUrl, merchant.id, jane.slug);
    t.match(visitId, /^vis_[0-9a-z]{26}$/);
    const body = {
      event_type: 'purchase',
      external_id: 'order_1001',
      cookie_id: visitId,
      amount: 19.99,
      currency: 'USD',
      payload: { customer_email: 'buyer@example.com', items: 2 },
    };
    const res = await client.post('/api/v1/events', body);
    t.equal(res.status, 201);
    t.match(res.body.id, /^evt_[0-9a-z]{26}$/);
    t.match(res.body.created_at, ISO_MS);
    t.same(res.body, {
      id: res.body.id,
      event_type: 'purchase',
      external_id: 'order_1001',
      cookie_id: visitId,
      coupon: null,
      amount: 19.99,
      currency: 'USD',
      payload: { customer_email: 'buyer@example.com', items: 2 },
      affiliate_id: jane.id,
      attributed_by: 'cookie',
      created_at: res.body.created_at,
    });

    // Stored as an exact NUMERIC, with the visit it came through. (That the outbox row is written in the same
    // transaction is shown by errors.test.ts: when the outbox write fails, no event is stored.)
    const [stored] = await sql<{ amount: string; visit_id: string }[]>`
    select e.amount::text as amount, e.visit_id from conversion_events e
    where e.merchant_id = ${merchant.id} and e.id = ${res.body.id}`;
    t.same(stored, { amount: '19.99', visit_id: visitId });
    t.equal(await outboxRowsFor(res.body.id), 1, 'one outbox row');

    const message = await eventually(
      async () => (await conversionMessages(platform)).find((m) => m.envelope.data['event_id'] === res.body.id),
      10_000,
      'conversion.recorded on the stream',
    );
    t.equal(message.subject, `${platform.prefix}.conversion.recorded`);
    t.equal(message.msgId, message.envelope.id, 'Nats-Msg-Id is the envelope id');
    t.match(message.envelope, {
      id: /^msg_/,
      type: 'conversion.recorded',
      merchant_id: merchant.id,
      created_at: ISO_MS,
    });
    t.ok(Value.Check(ConversionRecordedSchema, message.envelope.data), 'data fits ConversionRecordedSchema');
    const [visit] = await sql<
      { ip_hash: string }[]
    >`select ip_hash from visits where merchant_id = ${merchant.id} and id = ${visitId}`;
    t.same(message.envelope.data, {
      event_id: res.body.id,
      event_type: 'purchase',
      external_id: 'order_1001',
      amount: '19.99',
      currency: 'USD',
      affiliate_id: jane.id,
      attributed_by: 'cookie',
      visit: { id: visitId, ip_hash: visit!.ip_hash, fingerprint: null },
      customer_email: 'buyer@example.com',
      created_at: res.body.created_at,
    });
  },
);

t.test('a coupon alone attributes the event, matched case-insensitively', async (t) => {
  const res = await client.post('/api/v1/events', {
    event_type: 'purchase',
    external_id: 'order_1002',
    coupon: 'jane10',
    amount: 5,
  });
  t.equal(res.status, 201);
  t.match(res.body, {
    coupon: 'jane10',
    cookie_id: null,
    affiliate_id: jane.id,
    attributed_by: 'coupon',
    amount: 5,
    currency: 'USD',
    payload: {},
  });
  const message = await eventually(async () =>
    (await conversionMessages(platform)).find((m) => m.envelope.data['event_id'] === res.body.id),
  );
  t.match(message.envelope.data, {
    attributed_by: 'coupon',
    affiliate_id: jane.id,
    visit: null,
    customer_email: null,
    amount: '5',
  });
});

t.test("the cookie wins when both the cookie and another affiliate's coupon match", async (t) => {
  const visitId = await clickReferralLink(platform.baseUrl, merchant.id, jane.slug);
  const res = await client.post('/api/v1/events', {
    event_type: 'purchase',
    external_id: 'order_1003',
    cookie_id: visitId,
    coupon: 'MAX-5',
  });
  t.equal(res.status, 201);
  t.match(res.body, { affiliate_id: jane.id, attributed_by: 'cookie', coupon: 'MAX-5' });
});

t.test('an event that matches nothing is still stored and published, without an affiliate', async (t) => {
  const res = await client.post('/api/v1/events', {
    event_type: 'signup',
    external_id: 'lead_77',
    cookie_id: 'vis_00000000000000000000000000',
    coupon: 'NOBODY',
  });
  t.equal(res.status, 201);
  t.match(res.body, { affiliate_id: null, attributed_by: null, amount: 0 });
  const message = await eventually(async () =>
    (await conversionMessages(platform)).find((m) => m.envelope.data['event_id'] === res.body.id),
  );
  t.match(message.envelope.data, { affiliate_id: null, attributed_by: null, visit: null, amount: '0' });
});

t.test(
  'a visit older than the attribution window does not attribute; the window is the merchant setting',
  async (t) => {
    const old = await ageVisit(await clickReferralLink(platform.baseUrl, merchant.id, max.slug), 61);
    const expired = await client.post('/api/v1/events', {
      event_type: 'purchase',
      external_id: 'order_2001',
      cookie_id: old,
    });
    t.equal(expired.status, 201);
    t.match(expired.body, { affiliate_id: null, attributed_by: null }, 'default window of 60 days has passed');
    const [row] = await sql<
      { visit_id: string }[]
    >`select visit_id from conversion_events where merchant_id = ${merchant.id} and id = ${expired.body.id}`;
    t.equal(row!.visit_id, old, 'the expired visit is still recorded as the one the cookie named');

    // With a cookie for an expired visit and a valid coupon, the coupon attributes.
    const byCoupon = await client.post('/api/v1/events', {
      event_type: 'purchase',
      external_id: 'order_2002',
      cookie_id: old,
      coupon: 'jane10',
    });
    t.match(byCoupon.body, { affiliate_id: jane.id, attributed_by: 'coupon' });

    const recent = await ageVisit(await clickReferralLink(platform.baseUrl, merchant.id, max.slug), 6);
    await setSettings(sql, merchant.id, { attribution_window_days: 7 });
    t.teardown(() => setSettings(sql, merchant.id, { attribution_window_days: 60 }));
    const inside = await client.post('/api/v1/events', {
      event_type: 'purchase',
      external_id: 'order_2003',
      cookie_id: recent,
    });
    t.match(inside.body, { affiliate_id: max.id, attributed_by: 'cookie' }, '6 days old, window 7 days');
    const older = await ageVisit(recent, 8);
    const outside = await client.post('/api/v1/events', {
      event_type: 'purchase',
      external_id: 'order_2004',
      cookie_id: older,
    });
    t.match(outside.body, { affiliate_id: null, attributed_by: null }, '8 days old, window 7 days');
  },
);

t.test('only an approved affiliate is credited: a suspended one falls through to the next method', async (t) => {
  const sam = await createAffiliate(client, 'sam@example.com');
  await createCoupon(client, sam.id, 'SAM');
  const visitId = await clickReferralLink(platform.baseUrl, merchant.id, sam.slug);
  const suspended = await client.patch(`/api/v1/affiliates/${sam.id}`, { status: 'suspended' });
  t.equal(suspended.status, 200);
  const byCookie = await client.post('/api/v1/events', {
    event_type: 'purchase',
    external_id: 'order_3001',
    cookie_id: visitId,
  });
  t.match(byCookie.body, { affiliate_id: null, attributed_by: null });
  const cookieThenCoupon = await client.post('/api/v1/events', {
    event_type: 'purchase',
    external_id: 'order_3002',
    cookie_id: visitId,
    coupon: 'JANE10',
  });
  t.match(cookieThenCoupon.body, { affiliate_id: jane.id, attributed_by: 'coupon' });
  const byCoupon = await client.post('/api/v1/events', {
    event_type: 'purchase',
    external_id: 'order_3003',
    coupon: 'sam',
  });
  t.match(byCoupon.body, { affiliate_id: null, attributed_by: null });
});

t.test('the same event again answers 200 with the stored record, whatever the order of its fields', async (t) => {
  const body = {
    event_type: 'trial_started',
    external_id: 'sub_9',
    coupon: 'JANE10',
    amount: 0,
    payload: { plan: 'pro', seats: 3 },
  };
  const first = await client.post('/api/v1/events', body);
  t.equal(first.status, 201);
  const again = await client.post('/api/v1/events', {
    payload: { seats: 3, plan: 'pro' },
    amount: 0,
    coupon: 'JANE10',
    external_id: 'sub_9',
    event_type: 'trial_started',
  });
  t.equal(again.status, 200);
  t.same(again.body, first.body);
  t.equal(await outboxRowsFor(first.body.id), 1, 'a replay publishes nothing');

  // The key is (event_type, external_id): another event type with the same external_id is another event.
  const other = await client.post('/api/v1/events', { ...body, event_type: 'trial_converted' });
  t.equal(other.status, 201);
  t.not(other.body.id, first.body.id);
});

t.test('50 concurrent identical events: one is recorded, all answer it, one outbox row', async (t) => {
  const body = { event_type: 'purchase', external_id: 'order_race', coupon: 'MAX-5', amount: 42.5, currency: 'EUR' };
  const responses = await Promise.all(Array.from({ length: 50 }, () => client.post('/api/v1/events', body)));
  const statuses = responses.map((r) => r.status).sort();
  t.same(statuses, [...Array(49).fill(200), 201].sort(), 'one 201 and 49 200');
  const ids = new Set(responses.map((r) => r.body.id));
  t.equal(ids.size, 1, 'every answer is the same event');
  const [count] = await sql<{ n: number }[]>`
    select count(*)::int as n from conversion_events where merchant_id = ${merchant.id} and event_type = 'purchase' and external_id = 'order_race'`;
  t.equal(count!.n, 1, 'one event row');
  t.equal(await outboxRowsFor([...ids][0]), 1, 'one outbox row');
  const messages = await eventually(async () => {
    const found = (await conversionMessages(platform)).filter((m) => m.envelope.data['external_id'] === 'order_race');
    return found.length > 0 ? found : undefined;
  });
  t.equal(messages.length, 1, 'one message on the stream');
});

t.test(
  'amounts are exact and currencies follow ISO 4217 minor units; the default is the merchant currency',
  async (t) => {
    const euro = await platform.merchant();
    await setSettings(sql, euro.id, { currency: 'EUR' });
    const lena = await createAffiliate(euro.client, 'lena@example.com');
    await createCoupon(euro.client, lena.id, 'LENA');
    const cases: [Record<string, unknown>, number, string, string][] = [
      [{}, 0, '0', 'EUR'],
      [{ amount: 12.3 }, 12.3, '12.3', 'EUR'],
      [{ amount: 500, currency: 'JPY' }, 500, '500', 'JPY'],
      [{ amount: 1.234, currency: 'KWD' }, 1.234, '1.234', 'KWD'],
      [{ amount: 0.1, currency: 'USD' }, 0.1, '0.1', 'USD'],
      [{ amount: 999999999999.99, currency: 'USD' }, 999999999999.99, '999999999999.99', 'USD'],
    ];
    for (const [i, [extra, amount, text, currency]] of cases.entries()) {
      const res = await euro.client.post('/api/v1/events', {
        event_type: 'purchase',
        external_id: `amt_${i}`,
        coupon: 'LENA',
        ...extra,
      });
      t.equal(res.status, 201, JSON.stringify(extra));
      t.equal(res.body.amount, amount);
      t.equal(res.body.currency, currency);
      const [row] = await sql<
        { amount: string }[]
      >`select amount::text as amount from conversion_events where merchant_id = ${euro.id} and id = ${res.body.id}`;
      t.equal(row!.amount, text, `stored exactly as ${text}`);
      const message = await eventually(async () =>
        (await conversionMessages(platform)).find((m) => m.envelope.data['event_id'] === res.body.id),
      );
      t.equal(message.envelope.data['amount'], text, 'published as exact decimal text');
    }
  },
);

t.test('a refund is stored and published like any other event', async (t) => {
  const res = await client.post('/api/v1/events', {
    event_type: 'refund',
    external_id: 'order_1001',
    coupon: 'JANE10',
    amount: 19.99,
  });
  t.equal(res.status, 201);
  t.match(res.body, { event_type: 'refund', external_id: 'order_1001' });
  const message = await eventually(async () =>
    (await conversionMessages(platform)).find((m) => m.envelope.data['event_id'] === res.body.id),
  );
  t.match(message.envelope.data, { event_type: 'refund', external_id: 'order_1001', amount: '19.99' });
});

t.test('coupons: create, list newest first with filter and cursor, delete', async (t) => {
  const shop = await platform.merchant();
  const ann = await createAffiliate(shop.client, 'ann@example.com');
  const bob = await createAffiliate(shop.client, 'bob@example.com');
  const created = await shop.client.post('/api/v1/coupons', { code: 'Ann-Spring_24', affiliate_id: ann.id });
  t.equal(created.status, 201);
  t.match(created.body.id, /^cpn_[0-9a-z]{26}$/);
  t.same(created.body, {
    id: created.body.id,
    code: 'Ann-Spring_24',
    affiliate_id: ann.id,
    created_at: created.body.created_at,
  });
  t.match(created.body.created_at, ISO_MS);
  const second = await createCoupon(shop.client, ann.id, 'ANN2');
  const third = await createCoupon(shop.client, bob.id, 'BOB');

  const page1 = await shop.client.get('/api/v1/coupons?limit=2');
  t.equal(page1.status, 200);
  t.same(
    page1.body.data.map((c: { id: string }) => c.id),
    [third.id, second.id],
  );
  t.type(page1.body.next_cursor, 'string');
  const page2 = await shop.client.get(`/api/v1/coupons?limit=2&cursor=${encodeURIComponent(page1.body.next_cursor)}`);
  t.same(
    page2.body.data.map((c: { id: string }) => c.id),
    [created.body.id],
  );
  t.equal(page2.body.next_cursor, null);
  t.same(page2.body.data[0], created.body);

  const anns = await shop.client.get(`/api/v1/coupons?affiliate_id=${ann.id}`);
  t.same(
    anns.body.data.map((c: { id: string }) => c.id),
    [second.id, created.body.id],
  );

  const deleted = await shop.client.delete(`/api/v1/coupons/${second.id}`);
  t.equal(deleted.status, 204);
  t.equal(deleted.text, '');
  const after = await shop.client.get('/api/v1/coupons');
  t.same(
    after.body.data.map((c: { id: string }) => c.id),
    [third.id, created.body.id],
  );
  const again = await shop.client.delete(`/api/v1/coupons/${second.id}`);
  t.equal(again.status, 404);
  // The code is free again once deleted.
  t.equal((await shop.client.post('/api/v1/coupons', { code: 'ann2', affiliate_id: bob.id })).status, 201);
});
