import t from 'tap';
import { dashboardMerchant, sessionRequest, signInHttp, startDashboardPlatform } from '../helpers/dashboard.ts';

// What a session may not do: act without CSRF, outlive its expiry or sign-out, reach another merchant, or be guessed.
const { platform } = await startDashboardPlatform(t);
const base = platform.baseUrl;

t.test('a state-changing call without the CSRF token is refused with 403, and changes nothing', async (t) => {
  const m = await dashboardMerchant(platform);
  const signed = await signInHttp(base, m.email);
  const calls: [string, string, unknown][] = [
    ['POST', '/api/v1/affiliates', { email: 'csrf@example.com' }],
    ['POST', '/dashboard/api/keys', { scopes: ['read'] }],
    ['DELETE', '/dashboard/api/session', undefined],
  ];
  for (const [method, path, body] of calls) {
    for (const csrf of [undefined, 'x'.repeat(43), signed.csrf!.slice(0, -1)]) {
      const res = await sessionRequest(base, { cookie: signed.cookie, csrf }, method, path, body, {
        csrf: csrf !== undefined,
      });
      t.equal(res.status, 403, `${method} ${path} with ${csrf === undefined ? 'no' : 'a wrong'} token`);
      t.same(res.body, {
        error: {
          code: 'FORBIDDEN',
          message: 'A dashboard request that changes something needs the X-CSRF-Token header of its session',
          request_id: res.headers.get('x-request-id'),
        },
      });
    }
  }
  t.same(await platform.sql`select 1 from affiliates where merchant_id = ${m.id}`, [], 'no affiliate was made');
  t.same(
    await platform.sql`select 1 from api_keys where merchant_id = ${m.id} and id not in (select key_id from api_key_audit where actor = 'operator')`,
    [],
  );
  const still = await sessionRequest(base, signed, 'GET', '/dashboard/api/session');
  t.equal(still.body.session.user.email, m.email, 'the session was not ended');
  const other = await dashboardMerchant(platform);
  const otherSession = await signInHttp(base, other.email);
  const crossed = await sessionRequest(
    base,
    { cookie: signed.cookie, csrf: otherSession.csrf },
    'POST',
    '/api/v1/affiliates',
    { email: 'x@example.com' },
  );
  t.equal(crossed.status, 403, 'another session’s token does not fit');
});

t.test('an expired session is refused', async (t) => {
  const m = await dashboardMerchant(platform);
  const signed = await signInHttp(base, m.email);
  await platform.sql`update dashboard_sessions set expires_at = now() - interval '1 second' where user_id = (select id from dashboard_users where email = ${m.email})`;
  const res = await sessionRequest(base, signed, 'GET', '/api/v1/affiliates');
  t.equal(res.status, 401);
  t.equal(res.body.error.code, 'UNAUTHORIZED');
  t.equal(res.body.error.message, 'Sign in to the dashboard first');
});

t.test('sessions last eight hours', async (t) => {
  const m = await dashboardMerchant(platform);
  const signed = await signInHttp(base, m.email);
  const expires = Date.parse(signed.body['expires_at' as never]);
  t.ok(Math.abs(expires - Date.now() - 8 * 3600_000) < 60_000, 'expires_at eight hours on');
});

t.test('wrong passwords and unknown accounts get the same 401 and no cookie', async (t) => {
  const m = await dashboardMerchant(platform);
  for (const [email, password] of [
    [m.email, 'wrong password'],
    ['nobody@example.com', 'whatever'],
  ]) {
    const res = await signInHttp(base, email!, password);
    t.equal(res.status, 401);
    t.same(res.body.error, {
      code: 'UNAUTHORIZED',
      message: 'The e-mail or the password is not right',
      request_id: res.headers.get('x-request-id'),
    });
    t.equal(res.setCookie, null);
  }
  const bad = await signInHttp(base, '', '');
  t.equal(bad.status, 400);
  t.match(bad.body.error, { code: 'INVALID_INPUT', details: [{ path: 'email' }, { path: 'password' }] });
});

t.test('failed sign-ins are limited per account: the sixth is refused even with the right password', async (t) => {
  const m = await dashboardMerchant(platform);
  for (let i = 0; i < 5; i++) t.equal((await signInHttp(base, m.email, `wrong ${i}`)).status, 401);
  const refused = await signInHttp(base, m.email);
  t.equal(refused.status, 429);
  t.equal(refused.body.error!.code, 'RATE_LIMITED');
  t.ok(Number(refused.headers.get('retry-after')) > 800, 'Retry-After: the rest of the 15-minute window');
  t.equal(refused.setCookie, null);
  await platform.sql`update dashboard_signin_failures set window_start = now() - interval '16 minutes' where subject like ${`account%:${m.email}%`}`;
  t.equal((await signInHttp(base, m.email)).status, 201, 'the window over, the right password signs in');
});

t.test('failed sign-ins are limited per client IP across accounts', async (t) => {
  const before = await platform.sql<
    { count: number }[]
  >`select count from dashboard_signin_failures where subject = 'ip:127.0.0.1'`;
  const used = before[0]?.count ?? 0;
  for (let i = used; i < 50; i++) await signInHttp(base, `guess${i}@example.com`, 'nope');
  const m = await dashboardMerchant(platform);
  const refused = await signInHttp(base, m.email);
  t.equal(refused.status, 429, 'a fresh account from the same address is refused');
  await platform.sql`delete from dashboard_signin_failures where subject = 'ip:127.0.0.1'`;
});

t.test('a session sees its own merchant only: another merchant’s ids are not found', async (t) => {
  const owner = await dashboardMerchant(platform);
  const affiliate = await owner.client.post('/api/v1/affiliates', { email: 'theirs@example.com' });
  const [key] = await platform.sql<{ id: string }[]>`select id from api_keys where merchant_id = ${owner.id}`;
  const intruder = await dashboardMerchant(platform);
  const signed = await signInHttp(base, intruder.email);
  const checks: [string, string, unknown?][] = [
    ['GET', `/api/v1/affiliates/${affiliate.body.id}`],
    ['PATCH', `/api/v1/affiliates/${affiliate.body.id}`, { status: 'suspended' }],
    ['GET', `/dashboard/api/keys/${key!.id}/audit`],
    ['POST', `/dashboard/api/keys/${key!.id}/revoke`],
  ];
  for (const [method, path, body] of checks) {
    const res = await sessionRequest(base, signed, method, path, body);
    t.equal(res.status, 404, `${method} ${path}`);
    t.equal(res.body.error.code, 'NOT_FOUND');
  }
  const list = await sessionRequest(base, signed, 'GET', '/dashboard/api/keys');
  t.equal(list.body.data.length, 1, 'only the intruder’s own key is listed');
  const [revoked] = await platform.sql`select revoked_at from api_keys where id = ${key!.id}`;
  t.equal(revoked!['revoked_at'], null, 'the other merchant’s key still works');
});

t.test('a forged or malformed cookie is 401, and the cookie value is never stored', async (t) => {
  for (const cookie of ['x', 'A'.repeat(43), '../../etc']) {
    const res = await sessionRequest(base, { cookie, csrf: 'x' }, 'GET', '/dashboard/api/keys');
    t.equal(res.status, 401, cookie);
    const current = await sessionRequest(base, { cookie }, 'GET', '/dashboard/api/session');
    t.same(current.body, { session: null }, `${cookie}: no session`);
  }
  const m = await dashboardMerchant(platform);
  const signed = await signInHttp(base, m.email);
  const rows = await platform.sql`select token_hash::text as h from dashboard_sessions`;
  t.notOk(JSON.stringify(rows).includes(signed.cookie!), 'only a hash is stored');
  t.notOk(
    platform.logs.some((l) => l.includes(signed.cookie!) || l.includes('correct horse')),
    'no cookie or password in the logs',
  );
});

t.test('a bearer key wins over a cookie, and a key cannot reach the dashboard’s own API', async (t) => {
  const m = await dashboardMerchant(platform);
  const res = await fetch(`${base}/dashboard/api/keys`, { headers: { authorization: `Bearer ${m.key}` } });
  t.equal(res.status, 401, 'the dashboard’s API takes sessions only');
});
