import t from 'tap';
import { clickReferralLink, createAffiliate, rawRequest, setSettings, startWithEvents } from './setup.ts';

/**
 * What GET /api/v1/clicks and GET /api/v1/events never give away: another merchant's clicks and events (404, as
 * for an unknown id, and absent from lists), the visitor's IP address and user agent (kept for fraud checks only).
 * A crawler's click is recorded as device `bot`. Without GEO_COUNTRY_HEADER (unset here) a country header sent by
 * the client is ignored: any client can send one.
 */
const { platform } = await startWithEvents(t, { env: { TRUST_PROXY: '1' } });
const { sql, baseUrl } = platform;
const mine = await platform.merchant();
const theirs = await platform.merchant();
for (const m of [mine, theirs]) await setSettings(sql, m.id, { landing_url: 'https://shop.example.com/' });
await createAffiliate(mine.client, 'ann@example.com', { slug: 'ann' });
await createAffiliate(theirs.client, 'bob@example.com', { slug: 'bob' });

const IP = '198.51.100.77';
const AGENT = 'Mozilla/5.0 (X11; Linux x86_64) UniqueAgent/9.9.9-secret';
const theirClick = await clickReferralLink(baseUrl, theirs.id, 'bob', { 'user-agent': AGENT, 'x-forwarded-for': IP });
const theirEvent = (
  await theirs.client.post('/api/v1/events', { event_type: 'purchase', external_id: 'o-1', cookie_id: theirClick })
).body as { id: string };
const myClick = await clickReferralLink(baseUrl, mine.id, 'ann', {
  'user-agent': AGENT,
  'x-forwarded-for': IP,
  'cf-ipcountry': 'US',
});
const myEvent = (
  await mine.client.post('/api/v1/events', { event_type: 'purchase', external_id: 'o-1', cookie_id: myClick })
).body as { id: string };

t.test("another merchant's click and event are 404 and in none of my lists", async (t) => {
  t.equal((await theirs.client.get(`/api/v1/clicks/${theirClick}`)).status, 200, 'its own merchant sees it');
  const click = await mine.client.get(`/api/v1/clicks/${theirClick}`);
  t.equal(click.status, 404);
  t.equal(click.body.error.code, 'NOT_FOUND');
  t.equal((await mine.client.get(`/api/v1/events/${theirEvent.id}`)).status, 404);
  const clicks = (await mine.client.get('/api/v1/clicks?limit=100')).body.data as { id: string }[];
  t.same(
    clicks.map((c) => c.id),
    [myClick],
  );
  const events = (await mine.client.get('/api/v1/events?limit=100&external_id=o-1')).body.data as { id: string }[];
  t.same(
    events.map((e) => e.id),
    [myEvent.id],
    'the same external_id of another merchant is not mine',
  );
  const bob = (await theirs.client.get('/api/v1/clicks')).body.data[0].affiliate_id as string;
  t.same((await mine.client.get(`/api/v1/clicks?affiliate_id=${bob}`)).body.data, [], 'filtering by their affiliate');
  t.same((await mine.client.get(`/api/v1/events?affiliate_id=${bob}`)).body.data, []);
});

t.test('no answer carries the IP address or the user agent', async (t) => {
  const answers = [
    await mine.client.get(`/api/v1/clicks/${myClick}`),
    await mine.client.get('/api/v1/clicks'),
    await mine.client.get(`/api/v1/events/${myEvent.id}`),
    await mine.client.get('/api/v1/events'),
  ];
  const [stored] = await sql<{ ip_hash: string; user_agent: string }[]>`
    select ip_hash, user_agent from visits where id = ${myClick}`;
  t.equal(stored!.user_agent, AGENT, 'the user agent is stored, for fraud checks');
  for (const res of answers) {
    t.equal(res.status, 200);
    t.notOk(res.text.includes(IP), 'no IP address');
    t.notOk(res.text.includes('UniqueAgent'), 'no user agent');
    t.notOk(res.text.includes(stored!.ip_hash), 'no IP hash');
    t.notOk(/ip|user_agent|fingerprint/.test(Object.keys(res.body.data?.[0] ?? res.body).join(' ')), 'no such field');
  }
});

t.test(
  "a crawler's click is device bot; a client's country header is ignored without GEO_COUNTRY_HEADER",
  async (t) => {
    for (const agent of [
      'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
      'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
      'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
      'curl/8.5.0',
      'python-requests/2.32.3',
    ]) {
      const id = await clickReferralLink(baseUrl, mine.id, 'ann', {
        'user-agent': agent,
        'x-forwarded-for': '192.0.2.1',
      });
      t.equal((await mine.client.get(`/api/v1/clicks/${id}`)).body.device, 'bot', agent);
    }
    t.equal((await mine.client.get(`/api/v1/clicks/${myClick}`)).body.country, null, 'CF-IPCountry sent by the client');
    const res = await rawRequest(
      baseUrl,
      'POST',
      '/t/visit',
      { 'content-type': 'application/json', 'user-agent': 'Googlebot/2.1', 'cf-ipcountry': 'FR' },
      JSON.stringify({ merchant_id: mine.id, via: 'ann', referrer: 'javascript:alert(1)' }),
    );
    t.equal(res.status, 201);
    const click = (await mine.client.get(`/api/v1/clicks/${JSON.parse(res.text).visit_id}`)).body;
    t.same(
      { device: click.device, country: click.country, referrer: click.referrer },
      { device: 'bot', country: null, referrer: null },
      'the script path too; a referrer that is no web page is none',
    );
  },
);

t.test('the reads need the read scope and a plan with API access', async (t) => {
  const writer = await platform.merchant({ scopes: 'write' });
  const free = await platform.merchant({ plan: 'free' });
  for (const path of [
    '/api/v1/clicks',
    `/api/v1/clicks/${myClick}`,
    '/api/v1/events',
    `/api/v1/events/${myEvent.id}`,
  ]) {
    t.equal((await writer.client.get(path)).status, 403, `${path}: a write-only key`);
    t.equal((await free.client.get(path)).status, 402, `${path}: the free plan`);
  }
});
