import { createHmac } from 'node:crypto';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import { checkAgainstOpenApi } from '../helpers/client.ts';
import { eventually } from '../helpers/platform.ts';
import {
  conversionMessages,
  createAffiliate,
  rawJson as json,
  rawRequest,
  setSettings,
  startWithEvents,
  visitCookie,
} from './setup.ts';

/**
 * Public referral tracking through the gateway: /r/… links, the tracking script and POST /t/visit. The gateway
 * trusts one proxy hop here (TRUST_PROXY=1), as behind the ingress, so https and client IPs can be shown.
 */
const { platform, ipHashKey } = await startWithEvents(t, { env: { TRUST_PROXY: '1' } });
const { sql, baseUrl } = platform;
const merchant = await platform.merchant();
const { client } = merchant;
await setSettings(sql, merchant.id, {
  landing_url: 'https://shop.example.com/welcome?lang=en',
  tracking_host: 'go.shop.example',
});
const jane = await createAffiliate(client, 'jane@example.com', { slug: 'jane' });
const max = await createAffiliate(client, 'max@example.com', { slug: 'max' });
const pending = await createAffiliate(client, 'pat@example.com', { slug: 'pat', status: 'pending' });

const WINDOW_60_DAYS = 60 * 86_400;
const hashOf = (ip: string) => createHmac('sha256', ipHashKey).update(ip).digest('base64url');
const visitCount = async (): Promise<number> => {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from visits where merchant_id = ${merchant.id}`;
  return row!.n;
};

t.test('GET /r/{merchant_id}/{slug}: records the visit, sets the cookie, redirects with ?via=', async (t) => {
  const res = await rawRequest(baseUrl, 'GET', `/r/${merchant.id}/jane`, {
    'user-agent': 'Browser/1.0',
    'x-forwarded-for': '203.0.113.9',
  });
  t.equal(res.status, 302);
  t.equal(res.headers['location'], 'https://shop.example.com/welcome?lang=en&via=jane');
  t.equal(res.headers['cache-control'], 'no-store');
  const cookie = visitCookie(res);
  t.match(cookie.value, /^vis_[0-9a-z]{26}$/);
  t.ok(cookie.attributes.includes(`Max-Age=${WINDOW_60_DAYS}`), 'Max-Age is the 60-day window');
  t.ok(cookie.attributes.includes('Path=/'));
  t.ok(cookie.attributes.includes('SameSite=Lax'));
  t.notOk(cookie.attributes.includes('HttpOnly'), 'readable by the tracking script');
  t.notOk(cookie.attributes.includes('Secure'), 'plain http');

  const [visit] = await sql`
    select affiliate_id, ip_hash, user_agent, fingerprint, landing_url, round(extract(epoch from expires_at - created_at))::int as lifetime
    from visits where merchant_id = ${merchant.id} and id = ${cookie.value}`;
  t.same(visit, {
    affiliate_id: jane.id,
    ip_hash: hashOf('203.0.113.9'),
    user_agent: 'Browser/1.0',
    fingerprint: null,
    landing_url: 'https://shop.example.com/welcome?lang=en&via=jane',
    lifetime: WINDOW_60_DAYS,
  });
});

t.test('over https the cookie is Secure; the Max-Age follows the merchant window', async (t) => {
  await setSettings(sql, merchant.id, { attribution_window_days: 7 });
  t.teardown(() => setSettings(sql, merchant.id, { attribution_window_days: 60 }));
  const res = await rawRequest(baseUrl, 'GET', `/r/${merchant.id}/jane`, { 'x-forwarded-proto': 'https' });
  t.equal(res.status, 302);
  const cookie = visitCookie(res);
  t.ok(cookie.attributes.includes('Secure'));
  t.ok(cookie.attributes.includes(`Max-Age=${7 * 86_400}`));
});

t.test('the same browser clicking again keeps its visit; another affiliate’s link starts a new one', async (t) => {
  const first = visitCookie(await rawRequest(baseUrl, 'GET', `/r/${merchant.id}/jane`)).value;
  const before = await visitCount();
  const again = await rawRequest(baseUrl, 'GET', `/r/${merchant.id}/jane`, { cookie: `other=1; _svc_sess=${first}` });
  t.equal(again.status, 302);
  const kept = visitCookie(again);
  t.equal(kept.value, first, 'same visit');
  const maxAge = Number(kept.attributes.find((a) => a.startsWith('Max-Age='))!.slice(8));
  t.ok(maxAge <= WINDOW_60_DAYS && maxAge > WINDOW_60_DAYS - 60, `Max-Age is what is left of the window (${maxAge})`);
  t.equal(await visitCount(), before, 'no new visit');

  const other = visitCookie(
    await rawRequest(baseUrl, 'GET', `/r/${merchant.id}/max`, { cookie: `_svc_sess=${first}` }),
  ).value;
  t.not(other, first, 'the last click wins');
  t.equal(await visitCount(), before + 1);
});

t.test("GET /r/{slug} on the merchant's tracking host", async (t) => {
  const res = await rawRequest(baseUrl, 'GET', '/r/max', { host: 'Go.Shop.Example' });
  t.equal(res.status, 302);
  t.equal(res.headers['location'], 'https://shop.example.com/welcome?lang=en&via=max');
  const [visit] =
    await sql`select affiliate_id from visits where merchant_id = ${merchant.id} and id = ${visitCookie(res).value}`;
  t.equal(visit!['affiliate_id'], max.id);

  const unknownHost = await rawRequest(baseUrl, 'GET', '/r/max', { host: 'elsewhere.example' });
  t.equal(unknownHost.status, 404);
  t.match(json(unknownHost), { error: { code: 'NOT_FOUND', message: 'No such referral link' } });

  // Two merchants claiming one host is ambiguous: neither gets the visit.
  const twin = await platform.merchant();
  await setSettings(sql, twin.id, { landing_url: 'https://twin.example.com/', tracking_host: 'go.shop.example' });
  t.teardown(() => setSettings(sql, twin.id, { tracking_host: null }));
  t.equal((await rawRequest(baseUrl, 'GET', '/r/max', { host: 'go.shop.example' })).status, 404);
});

t.test('links that name nothing are 404 with the error envelope, and record nothing', async (t) => {
  const before = await visitCount();
  const cases: [string, string][] = [
    [`/r/${merchant.id}/nobody`, 'No such referral link'],
    [`/r/${merchant.id}/${pending.slug}`, 'No such referral link'],
    [`/r/${merchant.id}/Not_A_Slug`, 'No such referral link'],
    ['/r/mer_00000000000000000000000000/jane', 'No such referral link'],
    ['/r/not-a-merchant/jane', 'No such referral link'],
  ];
  for (const [path, message] of cases) {
    const res = await rawRequest(baseUrl, 'GET', path);
    t.equal(res.status, 404, path);
    t.match(res.headers['content-type'], /^application\/json/);
    const body = json(res);
    t.strictSame(body, { error: { code: 'NOT_FOUND', message, request_id: res.headers['x-request-id'] } });
    t.equal(res.headers['set-cookie'], undefined);
  }
  const bare = await platform.merchant();
  const bob = await createAffiliate(bare.client, 'bob@example.com');
  const noLanding = await rawRequest(baseUrl, 'GET', `/r/${bare.id}/${bob.slug}`);
  t.equal(noLanding.status, 404);
  t.match(json(noLanding), {
    error: { code: 'NOT_FOUND', message: 'This referral link has no landing page configured' },
  });
  t.equal(await visitCount(), before);
});

t.test('GET /t/script.js is served for embedding on other sites', async (t) => {
  const res = await rawRequest(baseUrl, 'GET', '/t/script.js');
  t.equal(res.status, 200);
  t.match(res.headers['content-type'], /^application\/javascript; charset=utf-8/);
  t.equal(res.headers['cross-origin-resource-policy'], 'cross-origin');
  t.equal(res.headers['cache-control'], 'public, max-age=3600');
  t.match(res.text, /_svc_sess/);
});

/** Runs the tracking script as a browser page at `pageUrl` would, with the real fetch against the gateway. */
async function runScript(
  pageUrl: string,
  existingCookie = '',
): Promise<{ requests: string[]; cookieWrites: string[] }> {
  const script = (await rawRequest(baseUrl, 'GET', '/t/script.js')).text;
  const requests: string[] = [];
  const cookieWrites: string[] = [];
  const attributes: Record<string, string> = { 'data-merchant': merchant.id, 'data-fingerprint': 'fp-7f3a' };
  const page = new URL(pageUrl);
  runInNewContext(script, {
    URL,
    URLSearchParams,
    window: {
      location: page,
      fetch: (url: string, init: RequestInit) => {
        requests.push(`${init.method} ${url} ${typeof init.body === 'string' ? init.body : ''}`);
        return fetch(url, init);
      },
    },
    document: {
      referrer: 'https://Blog.example.net/post?id=1',
      currentScript: { src: `${baseUrl}/t/script.js`, getAttribute: (name: string) => attributes[name] ?? null },
      get cookie() {
        return existingCookie;
      },
      set cookie(value: string) {
        cookieWrites.push(value);
      },
    },
  });
  return { requests, cookieWrites };
}

t.test(
  'the tracking script records the visit from ?via= and sets the first-party cookie; the event is then attributed',
  async (t) => {
    const run = await runScript('https://shop.example.com/pricing?via=max&utm_source=blog');
    const cookie = await eventually(async () => run.cookieWrites[0], 5000, 'the script to set its cookie');
    t.equal(run.requests.length, 1);
    t.match(run.requests[0], `POST ${baseUrl}/t/visit `);
    const match = /^_svc_sess=(vis_[0-9a-z]{26}); Max-Age=(\d+); Path=\/; SameSite=Lax; Secure$/.exec(cookie);
    t.ok(match, `cookie written: ${cookie}`);
    const visitId = match![1]!;
    t.equal(Number(match![2]), WINDOW_60_DAYS);
    const [visit] =
      await sql`select affiliate_id, fingerprint, landing_url, referrer_host from visits where merchant_id = ${merchant.id} and id = ${visitId}`;
    t.same(visit, {
      affiliate_id: max.id,
      fingerprint: 'fp-7f3a',
      landing_url: 'https://shop.example.com/pricing?via=max&utm_source=blog',
      referrer_host: 'blog.example.net',
    });

    // A reload of the same page with the cookie set keeps the visit.
    const reload = await runScript('https://shop.example.com/pricing?via=max', `_svc_sess=${visitId}`);
    const kept = await eventually(async () => reload.cookieWrites[0], 5000, 'the reload to refresh its cookie');
    t.match(kept, `_svc_sess=${visitId};`);

    // The merchant's backend sends the cookie value with the order.
    const event = await client.post('/api/v1/events', {
      event_type: 'purchase',
      external_id: 'script_order',
      cookie_id: visitId,
      amount: 30,
    });
    t.equal(event.status, 201);
    t.match(event.body, { affiliate_id: max.id, attributed_by: 'cookie' });
    const message = await eventually(async () =>
      (await conversionMessages(platform)).find((m) => m.envelope.data['event_id'] === event.body.id),
    );
    t.match(message.envelope.data, { visit: { id: visitId, fingerprint: 'fp-7f3a', ip_hash: hashOf('127.0.0.1') } });
  },
);

t.test('the tracking script does nothing on a page without ?via=', async (t) => {
  const run = await runScript('https://shop.example.com/pricing');
  t.same(run.requests, []);
  t.same(run.cookieWrites, []);
});

/** POST /t/visit; every answer is checked against the OpenAPI document, as the API client does for the API. */
const postVisit = async (body: unknown, headers: Record<string, string> = {}) => {
  const res = await rawRequest(
    baseUrl,
    'POST',
    '/t/visit',
    { 'content-type': 'application/json', origin: 'https://shop.example.com', ...headers },
    typeof body === 'string' ? body : JSON.stringify(body),
  );
  checkAgainstOpenApi('POST', '/t/visit', res.status, JSON.parse(res.text));
  return res;
};

t.test('POST /t/visit: 201 with the visit; the current visit is kept (200); CORS for any origin', async (t) => {
  const created = await postVisit({
    merchant_id: merchant.id,
    via: 'jane',
    landing_url: 'https://shop.example.com/?via=jane',
  });
  t.equal(created.status, 201);
  t.equal(created.headers['access-control-allow-origin'], '*');
  t.equal(created.headers['cross-origin-resource-policy'], 'cross-origin');
  const body = json(created);
  t.match(body, { visit_id: /^vis_[0-9a-z]{26}$/, max_age_seconds: WINDOW_60_DAYS });
  t.same(Object.keys(body).sort(), ['max_age_seconds', 'visit_id']);

  const kept = await postVisit({ merchant_id: merchant.id, via: 'jane', visit_id: body['visit_id'] });
  t.equal(kept.status, 200);
  t.equal(json(kept)['visit_id'], body['visit_id']);

  const switched = await postVisit({ merchant_id: merchant.id, via: 'max', visit_id: body['visit_id'] });
  t.equal(switched.status, 201);
  t.not(json(switched)['visit_id'], body['visit_id']);

  const preflight = await rawRequest(baseUrl, 'OPTIONS', '/t/visit', {
    origin: 'https://shop.example.com',
    'access-control-request-method': 'POST',
  });
  t.equal(preflight.status, 204);
  t.equal(preflight.headers['access-control-allow-methods'], 'POST');
  t.equal(preflight.headers['access-control-allow-headers'], 'Content-Type');
  t.equal(preflight.headers['access-control-max-age'], '86400');
});

t.test('POST /t/visit: refused input', async (t) => {
  const before = await visitCount();
  const invalid = async (body: unknown, details: { path: string; message: string }[]) => {
    const res = await postVisit(body);
    t.equal(res.status, 400, JSON.stringify(body).slice(0, 80));
    t.strictSame(json(res), {
      error: {
        code: 'INVALID_INPUT',
        message: 'The request is invalid',
        request_id: res.headers['x-request-id'],
        details,
      },
    });
  };
  await invalid({ merchant_id: merchant.id }, [{ path: 'via', message: 'is required' }]);
  await invalid({ merchant_id: merchant.id, via: 'Jane!' }, [
    { path: 'via', message: 'must match pattern "^[a-z0-9][a-z0-9-]{1,62}$"' },
  ]);
  await invalid({ merchant_id: merchant.id, via: 'jane', landing_url: 'javascript:alert(1)' }, [
    { path: 'landing_url', message: 'must match pattern "^https?://"' },
  ]);
  await invalid({ merchant_id: merchant.id, via: 'jane', fingerprint: 'f'.repeat(257) }, [
    { path: 'fingerprint', message: 'must NOT have more than 256 characters' },
  ]);
  await invalid({ merchant_id: merchant.id, via: 'jane', utm_source: 'x' }, [
    { path: 'utm_source', message: 'is not a known field' },
  ]);

  const malformed = await postVisit('{"merchant_id":');
  t.equal(malformed.status, 400);
  t.match(json(malformed), {
    error: { code: 'INVALID_INPUT', details: [{ path: 'body', message: 'is not valid JSON' }] },
  });
  const notJson = await postVisit('merchant_id=1', { 'content-type': 'text/plain' });
  t.equal(notJson.status, 415);
  t.match(json(notJson), { error: { code: 'INVALID_INPUT' } });
  const tooLarge = await postVisit({
    merchant_id: merchant.id,
    via: 'jane',
    landing_url: `https://x.example/${'a'.repeat(9000)}`,
  });
  t.equal(tooLarge.status, 413);
  t.match(json(tooLarge), { error: { code: 'INVALID_INPUT', message: 'The body exceeds 8kb' } });

  for (const body of [
    { merchant_id: 'mer_00000000000000000000000000', via: 'jane' },
    { merchant_id: 'nope', via: 'jane' },
    { merchant_id: merchant.id, via: pending.slug },
    { merchant_id: merchant.id, via: 'nobody' },
  ]) {
    const res = await postVisit(body);
    t.equal(res.status, 404, JSON.stringify(body));
    t.match(json(res), { error: { code: 'NOT_FOUND', message: 'No such referral link' } });
  }
  t.equal(await visitCount(), before, 'nothing recorded');
});
