import t from 'tap';
import type { Asserts } from '../gateway/expect.ts';
import {
  createAffiliate,
  rawJson as json,
  rawRequest,
  startWithEvents,
  setSettings,
  type RawResponse,
} from './setup.ts';

/**
 * The public tracking routes write a visit per call and need no key: each client address may record at most
 * TRACKING_RATE_LIMIT_PER_MIN visits a minute (here 5), whichever of the two routes and gateway replicas it uses.
 */
const LIMIT = 5;
const { platform } = await startWithEvents(t, {
  gateways: 2,
  env: { TRUST_PROXY: '1', TRACKING_RATE_LIMIT_PER_MIN: String(LIMIT) },
});
const { sql } = platform;
const [first, second] = platform.gateways.map((g) => `http://127.0.0.1:${g.port}`) as [string, string];
const merchant = await platform.merchant();
await setSettings(sql, merchant.id, { landing_url: 'https://shop.example.com/' });
await createAffiliate(merchant.client, 'jane@example.com', { slug: 'jane' });

const postVisit = (base: string, ip: string) =>
  rawRequest(
    base,
    'POST',
    '/t/visit',
    { 'content-type': 'application/json', 'x-forwarded-for': ip },
    JSON.stringify({ merchant_id: merchant.id, via: 'jane' }),
  );
const follow = (base: string, ip: string) =>
  rawRequest(base, 'GET', `/r/${merchant.id}/jane`, { 'x-forwarded-for': ip });
const visits = async () =>
  (await sql<{ n: number }[]>`select count(*)::int as n from visits where merchant_id = ${merchant.id}`)[0]!.n;

function assertLimited(t: Asserts, res: RawResponse) {
  t.equal(res.status, 429);
  t.strictSame(json(res), {
    error: {
      code: 'RATE_LIMITED',
      message: `At most ${LIMIT} visits a minute may be recorded from one address`,
      request_id: res.headers['x-request-id'],
    },
  });
  const retryAfter = Number(res.headers['retry-after']);
  t.ok(
    Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
    `Retry-After in whole seconds (${String(res.headers['retry-after'])})`,
  );
}

t.test(
  'one address: the limit holds across both routes and both replicas; other addresses are not affected',
  async (t) => {
    const ip = '198.51.100.7';
    const before = await visits();
    const allowed = [
      await postVisit(first, ip),
      await follow(second, ip),
      await postVisit(second, ip),
      await follow(first, ip),
      await postVisit(first, ip),
    ];
    t.same(
      allowed.map((r) => r.status),
      [201, 302, 201, 302, 201],
      `visits 1..${LIMIT} are recorded`,
    );
    t.equal(await visits(), before + LIMIT);

    const refusedPost = await postVisit(second, ip);
    assertLimited(t, refusedPost);
    t.equal(refusedPost.headers['access-control-allow-origin'], '*', 'the merchant page can read the 429 (CORS)');
    const refusedLink = await follow(first, ip);
    assertLimited(t, refusedLink);
    t.equal(refusedLink.headers['set-cookie'], undefined, 'no cookie is set by a refused link');
    t.equal(await visits(), before + LIMIT, 'refused calls record nothing');

    t.equal((await postVisit(first, '198.51.100.8')).status, 201, 'another address records its visit');
    t.equal(
      (await rawRequest(first, 'GET', '/t/script.js', { 'x-forwarded-for': ip })).status,
      200,
      'the script is still served',
    );
  },
);

t.test('the counter is kept under a keyed hash, never the address', async (t) => {
  const rows = await sql<{ key_id: string }[]>`select key_id from api_rate_windows where key_id like 'visits:%'`;
  t.ok(rows.length >= 2, 'one counter per address');
  for (const { key_id } of rows) {
    t.match(key_id, /^visits:[A-Za-z0-9_-]{43}$/);
    t.notMatch(key_id, /198\.51\.100/);
  }
});
