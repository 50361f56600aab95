import t from 'tap';
import { createAffiliate, createCoupon, setSettings, startWithEvents } from '../events/setup.ts';
import { insertClick, rolledUp } from './setup.ts';

/** Analytics are the merchant's own: another merchant's clicks, events, affiliates and codes never appear. */
const { platform } = await startWithEvents(t);
const { sql } = platform;
const mine = await platform.merchant();
const theirs = await platform.merchant();
for (const m of [mine, theirs]) await setSettings(sql, m.id, { currency: 'USD' });
const ann = await createAffiliate(mine.client, 'ann@example.com');
const zed = await createAffiliate(theirs.client, 'zed@example.com');
await createCoupon(theirs.client, zed.id, 'ZED');
const start = encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString());

await insertClick(sql, mine.id, { affiliateId: ann.id, country: 'FR' });
for (let i = 0; i < 3; i++) await insertClick(sql, theirs.id, { affiliateId: zed.id, country: 'NZ', device: 'mobile' });
await theirs.client.post('/api/v1/events', { event_type: 'sale', external_id: 'z1', coupon: 'ZED', amount: 99 });
await theirs.client.post('/api/v1/events', {
  event_type: 'sale',
  external_id: 'z2',
  coupon: 'ZED',
  amount: 5,
  currency: 'EUR',
});
await rolledUp(sql);

t.test('every grouping shows my data only', async (t) => {
  const day = await mine.client.get(`/api/v1/analytics?start=${start}`);
  const total = day.body.data.reduce((n: number, d: { clicks: number }) => n + d.clicks, 0);
  t.equal(total, 1, 'my one click');
  t.strictSame(day.body.other_currencies, [], 'their EUR event is not mine');
  for (const group of ['affiliate', 'coupon', 'country', 'device', 'event_type', 'referrer', 'landing_page']) {
    const res = await mine.client.get(`/api/v1/analytics?start=${start}&group_by=${group}`);
    t.equal(res.status, 200, group);
    const text = JSON.stringify(res.body.data);
    for (const theirValue of [zed.id, 'ZED', 'NZ', 'mobile', 'sale'])
      t.notOk(text.includes(theirValue), `${group}: nothing of theirs (${theirValue})`);
  }
});

t.test("their affiliate_id filters my analytics to nothing, as the lists' filters do", async (t) => {
  const series = await mine.client.get(`/api/v1/analytics?start=${start}&affiliate_id=${zed.id}`);
  t.equal(series.status, 200);
  t.ok(
    series.body.data.every((d: { clicks: number; conversions: number }) => d.clicks === 0 && d.conversions === 0),
    'every bucket zero',
  );
  const byAffiliate = await mine.client.get(
    `/api/v1/analytics?start=${start}&group_by=affiliate&affiliate_id=${zed.id}`,
  );
  t.strictSame(byAffiliate.body.data, [], 'no row, and no display name of theirs');
  t.strictSame(byAffiliate.body.other_currencies, []);
});

t.test('theirs sees theirs, with its own measures', async (t) => {
  const res = await theirs.client.get(`/api/v1/analytics?start=${start}&group_by=affiliate`);
  t.match(res.body.data, [{ key: zed.id, clicks: 3, conversions: 2, revenue: '99.00' }]);
  t.match(res.body.other_currencies, [{ currency: 'EUR', conversions: 1, revenue: '5.00' }]);
});

t.test("a visitor's landing page of any length is counted and stops no one's analytics", async (t) => {
  // 2,000 CJK characters are 6 KB of UTF-8, which /t/visit takes as a landing_url: as a rollup key it was too large
  // for an index entry, and every drain after it failed, for every merchant.
  const long = `https://shop.example.com/${'漢'.repeat(2000)}`;
  await insertClick(sql, mine.id, { affiliateId: ann.id, landingUrl: long });
  await insertClick(sql, theirs.id, { affiliateId: zed.id, country: 'NZ', device: 'mobile' });
  await rolledUp(sql);
  const theirsNow = await theirs.client.get(`/api/v1/analytics?start=${start}&group_by=affiliate`);
  t.match(theirsNow.body.data, [{ key: zed.id, clicks: 4 }], "the other merchant's click is counted");
  const pages = await mine.client.get(`/api/v1/analytics?start=${start}&group_by=landing_page`);
  const page = pages.body.data.find((d: { key: string | null }) => d.key?.startsWith('https://shop.example.com/'));
  t.equal(page?.clicks, 1, 'the long landing page is counted');
  t.equal(page?.key, long.slice(0, 200), 'under its first 200 characters');
});
