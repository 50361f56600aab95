import t from 'tap';
import { newId } from '@platform/shared/ids';
import { ensurePartitions } from '@platform/shared/partitions';
import { conversionEventPartitions } from '@platform/events/queries/conversion-events';
import { visitPartitions } from '@platform/events/queries/visits';
import { countryCode, deviceClass, referrerHost } from '@platform/events/domain/clicks';
import { startCommissions } from '../helpers/commissions.ts';
import { eventually } from '../helpers/platform.ts';
import { clickReferralLink, createAffiliate, createCoupon, rawRequest, setSettings, startWithEvents } from './setup.ts';

/**
 * Reading back what tracking and events recorded: GET /api/v1/clicks (with the referrer host, country and device
 * kept with each click) and GET /api/v1/events (with each event's attribution and commissions). The gateway takes
 * the country from CF-IPCountry here, as behind Cloudflare.
 */
const { platform } = await startWithEvents(t, { env: { GEO_COUNTRY_HEADER: 'CF-IPCountry' } });
await startCommissions(t, platform);
const { sql, baseUrl } = platform;
const merchant = await platform.merchant();
const { client } = merchant;
await setSettings(sql, merchant.id, { landing_url: 'https://shop.example.com/', level_rates: [0.5] });
const boss = await createAffiliate(client, 'boss@example.com', { slug: 'boss' });
const jane = await createAffiliate(client, 'jane@example.com', { slug: 'jane', parent_email: 'boss@example.com' });
const max = await createAffiliate(client, 'max@example.com', { slug: 'max' });

const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const IPAD =
  'Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const WINDOWS =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

t.test(
  'a referral click is read back with its referrer host, country and device; converted by its event',
  async (t) => {
    const clickId = await clickReferralLink(baseUrl, merchant.id, 'jane', {
      'user-agent': IPHONE,
      referer: 'https://News.Example.org/story/42?utm_source=x#top',
      'cf-ipcountry': 'de',
    });
    const before = await client.get(`/api/v1/clicks/${clickId}`);
    t.equal(before.status, 200);
    t.same(before.body, {
      id: clickId,
      object: 'click',
      affiliate_id: jane.id,
      landing_url: 'https://shop.example.com/?via=jane',
      referrer: 'news.example.org',
      country: 'DE',
      device: 'mobile',
      converted: null,
      created_at: before.body.created_at,
    });

    const refund = await client.post('/api/v1/events', {
      event_type: 'refund',
      external_id: 'o-0',
      cookie_id: clickId,
    });
    t.equal(refund.status, 201);
    t.equal((await client.get(`/api/v1/clicks/${clickId}`)).body.converted, null, 'a refund is no conversion');

    const first = await client.post('/api/v1/events', {
      event_type: 'purchase',
      external_id: 'o-1',
      cookie_id: clickId,
      amount: 100,
      currency: 'USD',
    });
    t.equal(first.status, 201);
    const second = await client.post('/api/v1/events', {
      event_type: 'purchase',
      external_id: 'o-2',
      cookie_id: clickId,
      amount: 20,
    });
    t.equal(second.status, 201);
    t.equal((await client.get(`/api/v1/clicks/${clickId}`)).body.converted, first.body.id, 'the first conversion');

    // The commissions service makes jane's commission and her parent's (level 1) from conversion.recorded.
    const event = await eventually(
      async () => {
        const res = await client.get(`/api/v1/events/${first.body.id}`);
        return res.body.commission_ids?.length === 2 ? res : undefined;
      },
      15_000,
      'both levels of commission',
    );
    const commissions = await sql<{ id: string; affiliate_id: string }[]>`
    select id, affiliate_id from commissions where merchant_id = ${merchant.id} and event_id = ${first.body.id}
    order by level`;
    t.same(
      commissions.map((c) => c.affiliate_id),
      [jane.id, boss.id],
    );
    t.same(event.body, {
      ...first.body,
      attribution: { method: 'cookie', click_id: clickId, coupon: null },
      commission_ids: commissions.map((c) => c.id),
    });
  },
);

t.test('the tracking script reports the page referrer; other devices are told apart', async (t) => {
  const res = await rawRequest(
    baseUrl,
    'POST',
    '/t/visit',
    { 'content-type': 'application/json', 'user-agent': IPAD, referer: 'https://shop.example.com/?via=max' },
    JSON.stringify({ merchant_id: merchant.id, via: 'max', referrer: 'https://www.Search.example/?q=shoes' }),
  );
  t.equal(res.status, 201);
  const visitId = (JSON.parse(res.text) as { visit_id: string }).visit_id;
  const click = (await client.get(`/api/v1/clicks/${visitId}`)).body;
  t.equal(click.referrer, 'www.search.example', "the page's referrer, not the request's Referer");
  t.equal(click.device, 'tablet');
  t.equal(click.country, null, 'no country header sent');
  t.equal(click.landing_url, null);

  const desktop = await clickReferralLink(baseUrl, merchant.id, 'max', { 'user-agent': WINDOWS, 'cf-ipcountry': 'XX' });
  const seen = (await client.get(`/api/v1/clicks/${desktop}`)).body;
  t.equal(seen.device, 'desktop');
  t.equal(seen.country, null, "Cloudflare's unknown country is none");
  t.equal(seen.referrer, null, 'no Referer');
});

t.test('the clicks list: newest first, paged by cursor, filtered by affiliate and time', async (t) => {
  const other = await platform.merchant();
  const list = await client.get('/api/v1/clicks?limit=100');
  t.equal(list.status, 200);
  const all = list.body.data as { id: string; affiliate_id: string; created_at: string }[];
  t.ok(all.length >= 3);
  const keys = all.map((c) => [c.created_at, c.id].join(' '));
  t.same(keys, [...keys].sort().reverse(), 'newest first');

  const paged: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { body: { data: { id: string }[]; next_cursor: string | null } } = await client.get(
      `/api/v1/clicks?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    t.ok(page.body.data.length <= 2);
    paged.push(...page.body.data.map((c) => c.id));
    cursor = page.body.next_cursor;
  } while (cursor);
  t.same(
    paged,
    all.map((c) => c.id),
    'pages of 2 give the whole list once',
  );

  const janes = (await client.get(`/api/v1/clicks?affiliate_id=${jane.id}`)).body.data as { affiliate_id: string }[];
  t.ok(janes.length >= 1);
  t.ok(janes.every((c) => c.affiliate_id === jane.id));

  const oldest = all[all.length - 1]!;
  const after = (await client.get(`/api/v1/clicks?created_after=${encodeURIComponent(oldest.created_at)}`)).body;
  t.notOk(
    after.data.some((c: { id: string }) => c.id === oldest.id),
    'created_after excludes its instant',
  );
  t.equal(after.data.length, all.filter((c) => c.created_at > oldest.created_at).length);
  const newest = all[0]!;
  const before = (await client.get(`/api/v1/clicks?created_before=${encodeURIComponent(newest.created_at)}`)).body;
  t.same(
    before.data.map((c: { id: string }) => c.id),
    all.filter((c) => c.created_at < newest.created_at).map((c) => c.id),
  );
  t.same((await other.client.get('/api/v1/clicks')).body, { data: [], next_cursor: null }, 'per merchant');
});

t.test('a click older than the visit retention is gone; a younger old one is not', async (t) => {
  const aged = async (days: number) => {
    const at = new Date(Date.now() - days * 86_400_000);
    const id = newId('vis', at.getTime());
    await sql`
      insert into visits (id, merchant_id, affiliate_id, created_at, expires_at, device)
      values (${id}, ${merchant.id}, ${max.id}, ${at}, ${at}, 'desktop')`;
    return id;
  };
  const kept = await aged(300);
  const gone = await aged(401);
  t.equal((await client.get(`/api/v1/clicks/${kept}`)).status, 200);
  t.equal((await client.get(`/api/v1/clicks/${gone}`)).status, 404, 'past VISIT_RETENTION_DAYS (400)');
  const ids = ((await client.get('/api/v1/clicks?limit=100')).body.data as { id: string }[]).map((c) => c.id);
  t.ok(ids.includes(kept));
  t.notOk(ids.includes(gone));
});

t.test('the events list: as stored, with attribution, filters and cursor paging', async (t) => {
  await createCoupon(client, max.id, 'MAX10');
  const byCoupon = await client.post('/api/v1/events', {
    event_type: 'trial_started',
    external_id: 'o-3',
    coupon: 'max10',
  });
  t.equal(byCoupon.status, 201);
  const nobody = await client.post('/api/v1/events', { event_type: 'purchase', external_id: 'o-4', coupon: 'NOPE' });
  t.equal(nobody.status, 201);

  const one = await client.get(`/api/v1/events/${byCoupon.body.id}`);
  t.same(one.body.attribution, { method: 'coupon', click_id: null, coupon: 'max10' });
  const none = await client.get(`/api/v1/events/${nobody.body.id}`);
  t.same(
    { attribution: none.body.attribution, commission_ids: none.body.commission_ids },
    { attribution: null, commission_ids: [] },
  );

  const all = (await client.get('/api/v1/events?limit=100')).body.data as {
    id: string;
    external_id: string;
    created_at: string;
  }[];
  t.same(
    all.map((e) => e.external_id),
    ['o-4', 'o-3', 'o-2', 'o-1', 'o-0'],
    'newest first',
  );
  const paged: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { body: { data: { external_id: string }[]; next_cursor: string | null } } = await client.get(
      `/api/v1/events?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    paged.push(...page.body.data.map((e) => e.external_id));
    cursor = page.body.next_cursor;
  } while (cursor);
  t.same(paged, ['o-4', 'o-3', 'o-2', 'o-1', 'o-0']);

  const ids = async (query: string) =>
    ((await client.get(`/api/v1/events?${query}`)).body.data as { external_id: string }[]).map((e) => e.external_id);
  t.same(await ids(`affiliate_id=${max.id}`), ['o-3']);
  t.same(await ids('event_type=purchase'), ['o-4', 'o-2', 'o-1']);
  t.same(await ids('external_id=o-2'), ['o-2']);
  t.same(await ids('external_id=o-0&event_type=refund'), ['o-0']);
  t.same(await ids('external_id=o-0&event_type=purchase'), []);
  const o1 = all.find((e) => e.external_id === 'o-1')!;
  const o3 = all.find((e) => e.external_id === 'o-3')!;
  t.same(
    await ids(`created_after=${encodeURIComponent(o1.created_at)}&created_before=${encodeURIComponent(o3.created_at)}`),
    all.filter((e) => e.created_at > o1.created_at && e.created_at < o3.created_at).map((e) => e.external_id),
  );
});

t.test('the click details, as pure functions of what the gateway saw', async (t) => {
  t.equal(referrerHost('https://WWW.Example.COM./a/b?q=secret#x'), 'www.example.com', 'host only, lower case');
  t.equal(referrerHost('https://bücher.example/'), 'xn--bcher-kva.example', 'an IDN as punycode');
  for (const bad of [null, '', 'not a url', 'android-app://com.example/', 'javascript:alert(1)', 'file:///etc/passwd'])
    t.equal(referrerHost(bad), null, String(bad));
  t.equal(countryCode(' gb '), 'GB');
  for (const bad of [null, '', 'XX', 'zz', 'T1', 'USA', 'D', '1A']) t.equal(countryCode(bad), null, String(bad));
  t.equal(deviceClass(IPHONE), 'mobile');
  t.equal(deviceClass(IPAD), 'tablet');
  t.equal(deviceClass(WINDOWS), 'desktop');
  t.equal(
    deviceClass('Mozilla/5.0 (PlayStation; PlayStation 5/2.26) AppleWebKit/605.1.15 (KHTML, like Gecko)'),
    'other',
  );
  t.equal(deviceClass('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'), 'bot');
  t.equal(deviceClass(null), 'other');
});

t.test(
  'every month of visits and events has the reads indexes, those made before and after the migration',
  async (t) => {
    const later = new Date(Date.now() + 200 * 86_400_000);
    const made = [
      ...(await ensurePartitions(sql, visitPartitions, later)),
      ...(await ensurePartitions(sql, conversionEventPartitions, later)),
    ];
    t.ok(made.length >= 2, 'months made by the service');
    const missing = await sql<{ partition: string; index: string }[]>`
    select c.relname as partition, w.suffix as index
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    join (values ('visits', 'merchant_created'), ('visits', 'affiliate_created'),
                 ('conversion_events', 'visit'), ('conversion_events', 'affiliate')) w(parent, suffix)
      on i.inhparent = w.parent::regclass
    where not exists (select 1 from pg_indexes x where x.tablename = c.relname and x.indexname = c.relname || '_' || w.suffix)`;
    t.same(missing, []);
  },
);
