import t from 'tap';
import { startCommissions } from '../helpers/commissions.ts';
import { eventually } from '../helpers/platform.ts';
import { createAffiliate, createCoupon, setSettings, startWithEvents } from '../events/setup.ts';
import { insertClick, insertEvent, rolledUp } from './setup.ts';

/** GET /api/v1/analytics over rollups drained from real clicks, events and commissions. */
const { platform } = await startWithEvents(t);
await startCommissions(t, platform);
const { sql } = platform;
const m = await platform.merchant();
await setSettings(sql, m.id, { default_rate: 0.1, currency: 'USD', landing_url: 'https://shop.example.com/' });
const ann = await createAffiliate(m.client, 'ann@example.com', { display_name: 'Ann Archer' });
const bob = await createAffiliate(m.client, 'bob@example.com', { display_name: 'Bob Baker' });
await createCoupon(m.client, bob.id, 'BOB10');

t.test('a daily series has every bucket, zeros included; Europe/Paris across the end of summer time', async (t) => {
  // 2026-10-25 is the day Paris goes from +02:00 to +01:00: a local day of 25 hours.
  await insertClick(sql, m.id, { affiliateId: ann.id, at: new Date('2026-10-24T22:30:00Z') }); // 25th 00:30 Paris
  await insertClick(sql, m.id, { affiliateId: ann.id, at: new Date('2026-10-25T22:30:00Z') }); // 25th 23:30 Paris
  await insertClick(sql, m.id, { affiliateId: ann.id, at: new Date('2026-10-25T23:30:00Z') }); // 26th 00:30 Paris
  await insertClick(sql, m.id, { affiliateId: ann.id, at: new Date('2026-10-25T12:00:00Z'), device: 'bot' });
  await insertEvent(sql, m.id, { at: new Date('2026-10-25T23:45:00Z'), affiliateId: ann.id, amount: '20.50' });
  await rolledUp(sql);

  const range = 'start=2026-10-23T00:00:00%2B02:00&end=2026-10-28T00:00:00%2B01:00';
  const paris = await m.client.get(`/api/v1/analytics?${range}&timezone=Europe/Paris`);
  t.equal(paris.status, 200);
  t.match(paris.body, { object: 'analytics', group_by: 'day', timezone: 'Europe/Paris', currency: 'USD' });
  t.strictSame(
    paris.body.data.map((d: { key: string; clicks: number; conversions: number; revenue: string }) => [
      d.key,
      d.clicks,
      d.conversions,
      d.revenue,
    ]),
    [
      ['2026-10-23T00:00:00+02:00', 0, 0, '0.00'],
      ['2026-10-24T00:00:00+02:00', 0, 0, '0.00'],
      ['2026-10-25T00:00:00+02:00', 2, 0, '0.00'],
      ['2026-10-26T00:00:00+01:00', 1, 1, '20.50'],
      ['2026-10-27T00:00:00+01:00', 0, 0, '0.00'],
    ],
    'each local day once, with its offset; the bot click is not a click',
  );

  const utc = await m.client.get('/api/v1/analytics?start=2026-10-24T00:00:00Z&end=2026-10-27T00:00:00Z');
  t.strictSame(
    utc.body.data.map((d: { key: string; clicks: number }) => [d.key, d.clicks]),
    [
      ['2026-10-24T00:00:00+00:00', 1],
      ['2026-10-25T00:00:00+00:00', 2],
      ['2026-10-26T00:00:00+00:00', 0],
    ],
    'the same clicks fall on other days in UTC',
  );

  const weeks = await m.client.get(
    `/api/v1/analytics?group_by=week&start=2026-10-19T00:00:00Z&end=2026-11-02T00:00:00Z&affiliate_id=${ann.id}`,
  );
  t.strictSame(
    weeks.body.data.map((d: { key: string; clicks: number }) => [d.key, d.clicks]),
    [
      ['2026-10-19T00:00:00+00:00', 3],
      ['2026-10-26T00:00:00+00:00', 0],
    ],
    'weeks start on Monday; filtered by the affiliate',
  );

  const kolkata = await m.client.get(
    '/api/v1/analytics?start=2026-10-25T00:00:00Z&end=2026-10-27T00:00:00Z&timezone=Asia/Kolkata',
  );
  t.strictSame(
    kolkata.body.data.map((d: { key: string; clicks: number }) => [d.key, d.clicks]),
    [
      ['2026-10-25T00:00:00+05:30', 0],
      ['2026-10-26T00:00:00+05:30', 2],
      ['2026-10-27T00:00:00+05:30', 0],
    ],
    'a half-hour offset gets exact local days (15-minute buckets)',
  );
});

t.test('dimensions: top N by conversions, click dimensions of the attributing visit, other currencies', async (t) => {
  const start = new Date(Date.now() - 3_600_000).toISOString();
  const visit = await insertClick(sql, m.id, {
    affiliateId: ann.id,
    country: 'FR',
    referrerHost: 'blog.example.org',
    device: 'mobile',
    landingUrl: 'https://shop.example.com/shoes?via=ann#top',
  });
  await insertClick(sql, m.id, { affiliateId: bob.id, country: 'DE', device: 'desktop' });
  await insertClick(sql, m.id, { affiliateId: bob.id, country: 'DE', device: 'bot' });
  const post = (body: Record<string, unknown>) => m.client.post('/api/v1/events', body);
  t.equal((await post({ event_type: 'purchase', external_id: 'o1', cookie_id: visit, amount: 100 })).status, 201);
  t.equal((await post({ event_type: 'purchase', external_id: 'o2', cookie_id: visit, amount: 50.25 })).status, 201);
  t.equal((await post({ event_type: 'purchase', external_id: 'o3', coupon: 'bob10', amount: 10 })).status, 201);
  t.equal(
    (await post({ event_type: 'purchase', external_id: 'o4', coupon: 'BOB10', amount: 30, currency: 'EUR' })).status,
    201,
  );
  await eventually(async () => {
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from commissions where merchant_id = ${m.id}`;
    return row!.n === 4 ? true : undefined;
  });
  await rolledUp(sql);

  const q = `start=${encodeURIComponent(start)}`;
  const byAffiliate = await m.client.get(`/api/v1/analytics?${q}&group_by=affiliate`);
  t.equal(byAffiliate.status, 200);
  t.strictSame(byAffiliate.body.data, [
    { key: ann.id, display_name: 'Ann Archer', clicks: 1, conversions: 2, revenue: '150.25', commissions: '15.02' },
    { key: bob.id, display_name: 'Bob Baker', clicks: 1, conversions: 2, revenue: '10.00', commissions: '1.00' },
  ]);
  t.strictSame(byAffiliate.body.other_currencies, [
    { currency: 'EUR', conversions: 1, revenue: '30.00', commissions: '3.00' },
  ]);

  const top1 = await m.client.get(`/api/v1/analytics?${q}&group_by=affiliate&limit=1`);
  t.same(
    top1.body.data.map((d: { key: string }) => d.key),
    [ann.id],
    'limit keeps the top by conversions (ties by value, none last)',
  );

  const byCountry = await m.client.get(`/api/v1/analytics?${q}&group_by=country`);
  t.strictSame(
    byCountry.body.data.map((d: { key: string; clicks: number; conversions: number }) => [
      d.key,
      d.clicks,
      d.conversions,
    ]),
    [
      ['FR', 1, 2],
      [null, 0, 2],
      ['DE', 1, 0],
    ],
    "a cookie's events take its visit's country; coupon events have none",
  );
  const byLanding = await m.client.get(`/api/v1/analytics?${q}&group_by=landing_page`);
  t.equal(byLanding.body.data[0].key, 'https://shop.example.com/shoes', 'without query or fragment');
  const byCoupon = await m.client.get(`/api/v1/analytics?${q}&group_by=coupon`);
  t.strictSame(
    byCoupon.body.data.map((d: { key: string; conversions: number }) => [d.key, d.conversions]),
    [
      ['BOB10', 2],
      [null, 2],
    ],
  );
  const byDevice = await m.client.get(`/api/v1/analytics?${q}&group_by=device&affiliate_id=${bob.id}`);
  t.strictSame(
    byDevice.body.data.map((d: { key: string; clicks: number }) => [d.key, d.clicks]),
    [
      [null, 0],
      ['desktop', 1],
    ],
    'bots never count as clicks',
  );
  const eur = await m.client.get(`/api/v1/analytics?${q}&group_by=event_type&currency=EUR`);
  t.strictSame(eur.body.data, [{ key: 'purchase', clicks: 0, conversions: 4, revenue: '30.00', commissions: '3.00' }]);
  t.strictSame(eur.body.other_currencies, [
    { currency: 'USD', conversions: 3, revenue: '160.25', commissions: '16.02' },
  ]);
});
