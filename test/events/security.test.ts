import { createHmac } from 'node:crypto';
import t from 'tap';
import { expectError } from '../helpers/errors.ts';
import { eventually } from '../helpers/platform.ts';
import {
  clickReferralLink,
  conversionMessages,
  createAffiliate,
  createCoupon,
  rawRequest,
  setSettings,
  startWithEvents,
} from './setup.ts';

/** Tenant isolation, scopes, and what must never be stored or written to logs (raw IPs, user agents, bodies). */
const { platform, eventsLogs, ipHashKey } = await startWithEvents(t);
const { sql } = platform;
const mine = await platform.merchant();
const theirs = await platform.merchant();
await setSettings(sql, mine.id, { landing_url: 'https://mine.example.com/' });
await setSettings(sql, theirs.id, { landing_url: 'https://theirs.example.com/' });
const ann = await createAffiliate(mine.client, 'ann@example.com');
const zed = await createAffiliate(theirs.client, 'zed@example.com');
const theirCoupon = await createCoupon(theirs.client, zed.id, 'ZED');

t.test("another merchant's coupons: never listed, never deleted, never matched", async (t) => {
  await createCoupon(mine.client, ann.id, 'ANN');
  const list = await mine.client.get('/api/v1/coupons');
  t.same(
    list.body.data.map((c: { code: string }) => c.code),
    ['ANN'],
  );
  const filtered = await mine.client.get(`/api/v1/coupons?affiliate_id=${zed.id}`);
  t.equal(filtered.status, 200);
  t.same(
    filtered.body,
    { data: [], next_cursor: null },
    'filtering by their affiliate shows nothing, and says nothing of it',
  );

  expectError(t, await mine.client.delete(`/api/v1/coupons/${theirCoupon.id}`), 404, 'NOT_FOUND', 'No such coupon');
  const [still] = await sql`select 1 from coupons where id = ${theirCoupon.id}`;
  t.ok(still, 'their coupon is untouched');

  const event = await mine.client.post('/api/v1/events', { event_type: 'purchase', external_id: 'x1', coupon: 'ZED' });
  t.equal(event.status, 201);
  t.match(event.body, { affiliate_id: null, attributed_by: null }, 'their code does not attribute my event');
});

t.test("another merchant's visit cookie does not attribute, and is not even recorded as the visit", async (t) => {
  const theirVisit = await clickReferralLink(platform.baseUrl, theirs.id, zed.slug);
  const event = await mine.client.post('/api/v1/events', {
    event_type: 'purchase',
    external_id: 'x2',
    cookie_id: theirVisit,
  });
  t.match(event.body, { affiliate_id: null, attributed_by: null, cookie_id: theirVisit });
  const [row] = await sql<
    { visit_id: string | null }[]
  >`select visit_id from conversion_events where id = ${event.body.id}`;
  t.equal(row!.visit_id, null);
});

t.test('a referral link names a slug of the merchant in its path only', async (t) => {
  const res = await rawRequest(platform.baseUrl, 'GET', `/r/${mine.id}/${zed.slug}`);
  t.equal(res.status, 404);
  t.match(JSON.parse(res.text), { error: { code: 'NOT_FOUND', message: 'No such referral link' } });
  const scripted = await rawRequest(
    platform.baseUrl,
    'POST',
    '/t/visit',
    { 'content-type': 'application/json' },
    JSON.stringify({ merchant_id: mine.id, via: zed.slug }),
  );
  t.equal(scripted.status, 404);
});

t.test('scopes: a write-only key records events but cannot read coupons; a read-only key cannot write', async (t) => {
  const writeOnly = await platform.merchant({ scopes: 'write' });
  const wAff = await createAffiliate(writeOnly.client, 'w@example.com');
  expectError(t, await writeOnly.client.get('/api/v1/coupons'), 403, 'FORBIDDEN', 'This key lacks the read scope');
  t.equal((await writeOnly.client.post('/api/v1/coupons', { code: 'W1', affiliate_id: wAff.id })).status, 201);
  t.equal(
    (await writeOnly.client.post('/api/v1/events', { event_type: 'purchase', external_id: 'w', coupon: 'W1' })).status,
    201,
  );

  const readOnly = await platform.merchant({ scopes: 'read' });
  expectError(
    t,
    await readOnly.client.post('/api/v1/events', { event_type: 'purchase', external_id: 'r', coupon: 'R' }),
    403,
    'FORBIDDEN',
    'This key lacks the write scope',
  );
  expectError(
    t,
    await readOnly.client.post('/api/v1/coupons', { code: 'R1', affiliate_id: ann.id }),
    403,
    'FORBIDDEN',
    'This key lacks the write scope',
  );
  expectError(
    t,
    await readOnly.client.delete('/api/v1/coupons/cpn_00000000000000000000000000'),
    403,
    'FORBIDDEN',
    'This key lacks the write scope',
  );
  t.equal((await readOnly.client.get('/api/v1/coupons')).status, 200);
});

t.test('no key is 401 and a plan below growth is 402, before any input is looked at', async (t) => {
  const anonymous = platform.client();
  for (const res of [
    await anonymous.post('/api/v1/events', { nonsense: true }),
    await anonymous.get('/api/v1/coupons'),
    await anonymous.delete('/api/v1/coupons/cpn_00000000000000000000000000'),
  ]) {
    t.equal(res.status, 401);
    t.equal(res.body.error.code, 'UNAUTHORIZED');
  }
  const starter = await platform.merchant({ plan: 'starter' });
  const res = await starter.client.post('/api/v1/events', { nonsense: true });
  t.equal(res.status, 402);
  t.equal(res.body.error.code, 'PLAN_REQUIRED');
});

t.test(
  'the raw IP, user agent, fingerprint and payload are never logged, and the IP is stored only as an HMAC',
  async (t) => {
    const agent = 'SecretAgent/9.9 (leak-check)';
    const visitId = await clickReferralLink(platform.baseUrl, mine.id, ann.slug, { 'user-agent': agent });
    const scripted = await rawRequest(
      platform.baseUrl,
      'POST',
      '/t/visit',
      { 'content-type': 'application/json', 'user-agent': agent },
      JSON.stringify({
        merchant_id: mine.id,
        via: ann.slug,
        fingerprint: 'fp-leak-check-123',
        landing_url: 'https://mine.example.com/?via=x&email=private%40example.com',
      }),
    );
    t.equal(scripted.status, 201);
    const event = await mine.client.post('/api/v1/events', {
      event_type: 'purchase',
      external_id: 'leak_1',
      cookie_id: visitId,
      amount: 12.34,
      payload: { customer_email: 'private-buyer@example.com', card_last4: '4242', gift_note: 'leak-check-note' },
    });
    t.equal(event.status, 201);
    await eventually(async () =>
      (await conversionMessages(platform)).find((m) => m.envelope.data['event_id'] === event.body.id),
    );

    const expectedHash = createHmac('sha256', ipHashKey).update('127.0.0.1').digest('base64url');
    const visits = await sql<
      { ip_hash: string; row: string }[]
    >`select ip_hash, row_to_json(v)::text as row from visits v where merchant_id = ${mine.id}`;
    t.ok(visits.length >= 2);
    for (const v of visits) {
      t.equal(v.ip_hash, expectedHash, 'the IP is kept as its HMAC');
      t.notMatch(v.row, '127.0.0.1', 'no column holds the raw IP');
    }
    const allLogs = [...platform.logs, ...eventsLogs].join('\n');
    t.ok(
      eventsLogs.some((l) => l.includes(event.body.id)),
      'the events service did log the event, by id',
    );
    // The payload by its field name and a value no id or timestamp can contain: '4242' itself turns up in random ids.
    const secrets = [
      '127.0.0.1',
      agent,
      'fp-leak-check-123',
      'private-buyer@example.com',
      'private%40example.com',
      'card_last4',
      'leak-check-note',
      mine.key,
    ];
    for (const secret of secrets) {
      t.notOk(allLogs.includes(secret), `logs never contain ${secret}`);
    }
    const streamed = (await conversionMessages(platform)).map((m) => m.text).join('\n');
    t.notOk(streamed.includes('127.0.0.1') || streamed.includes(agent), 'the stream carries neither IP nor user agent');
  },
);

t.test('CORS is open on /t/visit only', async (t) => {
  const preflight = await rawRequest(platform.baseUrl, 'OPTIONS', '/t/visit', {
    origin: 'https://mine.example.com',
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'content-type',
  });
  t.equal(preflight.status, 204);
  t.equal(preflight.headers['access-control-allow-origin'], '*');
  t.equal(preflight.headers['access-control-allow-credentials'], undefined, 'never with credentials');

  const api = await rawRequest(platform.baseUrl, 'OPTIONS', '/api/v1/events', {
    origin: 'https://evil.example',
    'access-control-request-method': 'POST',
  });
  t.equal(api.headers['access-control-allow-origin'], undefined, 'the API allows no other origin');
  const list = await rawRequest(platform.baseUrl, 'GET', '/api/v1/coupons', {
    origin: 'https://evil.example',
    authorization: `Bearer ${mine.key}`,
  });
  t.equal(list.status, 200);
  t.equal(list.headers['access-control-allow-origin'], undefined);
});

t.test('a landing page that is not http(s) is never a redirect target', async (t) => {
  const shady = await platform.merchant();
  const sid = await createAffiliate(shady.client, 'sid@example.com');
  await setSettings(sql, shady.id, { landing_url: 'javascript:alert(document.cookie)' });
  const res = await rawRequest(platform.baseUrl, 'GET', `/r/${shady.id}/${sid.slug}`);
  t.equal(res.status, 404);
  t.equal(res.headers['location'], undefined);
  t.equal(res.headers['set-cookie'], undefined);
  t.match(JSON.parse(res.text), {
    error: { code: 'NOT_FOUND', message: 'This referral link has no landing page configured' },
  });
});
