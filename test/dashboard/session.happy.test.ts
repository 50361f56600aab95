import t from 'tap';
import { PASSWORD_COST } from '@platform/shared/passwords';
import { dashboardMerchant, sessionRequest, signInHttp, startDashboardPlatform } from '../helpers/dashboard.ts';

// Sign-in, the session, the dashboard's calls to the public API with its cookie, sign-out: over real HTTP.
const { platform } = await startDashboardPlatform(t);
const base = platform.baseUrl;

t.test(
  'signing in sets an HttpOnly, Secure (outside development), SameSite=Strict session cookie and answers the session',
  async (t) => {
    const m = await dashboardMerchant(platform, 'starter');
    const signed = await signInHttp(base, m.email.toUpperCase());
    t.equal(signed.status, 201);
    t.match(
      signed.setCookie,
      /^dash_session=[A-Za-z0-9_-]{43}; Path=\/; Expires=[^;]+; HttpOnly; Secure; SameSite=Strict$/,
    );
    t.match(signed.body, {
      user: { email: m.email },
      merchant: { id: m.id, plan: 'starter' },
      csrf_token: /^[A-Za-z0-9_-]{43}$/,
    });
    const session = await sessionRequest(base, signed, 'GET', '/dashboard/api/session');
    t.equal(session.status, 200);
    t.same(session.body, { session: signed.body }, 'the same session, csrf token included');
    t.equal(session.headers.get('cache-control'), 'no-store');
  },
);

t.test('a session calls the public API for its merchant on every plan, without a key', async (t) => {
  const starter = await dashboardMerchant(platform, 'free');
  const signed = await signInHttp(base, starter.email);
  const created = await sessionRequest(base, signed, 'POST', '/api/v1/affiliates', { email: 'jane@example.com' });
  t.equal(created.status, 201, 'a free merchant creates an affiliate through the dashboard');
  t.equal(created.body.email, 'jane@example.com');
  const list = await sessionRequest(base, signed, 'GET', '/api/v1/affiliates');
  t.equal(list.status, 200);
  t.same(
    list.body.data.map((a: { id: string }) => a.id),
    [created.body.id],
  );
  const stored = await platform.sql`select merchant_id from affiliates where id = ${created.body.id}`;
  t.equal(stored[0]!['merchant_id'], starter.id, 'stored for the session’s merchant');
});

t.test('signing out ends the session: the old cookie gets 401 everywhere', async (t) => {
  const m = await dashboardMerchant(platform);
  const signed = await signInHttp(base, m.email);
  const out = await sessionRequest(base, signed, 'DELETE', '/dashboard/api/session');
  t.equal(out.status, 204);
  t.match(
    out.headers.get('set-cookie'),
    /^dash_session=; Path=\/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; Secure; SameSite=Strict$/,
  );
  for (const path of ['/api/v1/affiliates', '/dashboard/api/keys']) {
    const again = await sessionRequest(base, signed, 'GET', path);
    t.equal(again.status, 401, path);
    t.equal(again.body.error.code, 'UNAUTHORIZED');
  }
  const current = await sessionRequest(base, signed, 'GET', '/dashboard/api/session');
  t.same(current.body, { session: null }, 'the app’s first look finds no session');
  t.same(
    await platform.sql`select 1 from dashboard_sessions where user_id in (select id from dashboard_users where email = ${m.email})`,
    [],
  );
});

t.test('the dashboard’s OpenAPI document describes its routes', async (t) => {
  const res = await fetch(`${base}/dashboard/api/openapi`);
  t.equal(res.status, 200);
  const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, { operationId: string }>> };
  t.equal(doc.openapi, '3.1.0');
  t.equal(doc.paths['/dashboard/api/session']!['post']!.operationId, 'signIn');
  t.equal(doc.paths['/dashboard/api/keys/{key_id}/revoke']!['post']!.operationId, 'revokeApiKey');
});

t.test('the dashboard’s pages: index.html for every path, hashed assets cached', async (t) => {
  for (const path of ['/dashboard', '/dashboard/', '/dashboard/settings/keys']) {
    const res = await fetch(`${base}${path}`);
    t.equal(res.status, 200, path);
    t.equal(res.headers.get('cache-control'), 'no-cache');
    const html = await res.text();
    t.match(html, /<script type="module" crossorigin src="\/dashboard\/assets\/index-[A-Za-z0-9_-]+\.js"><\/script>/);
  }
  const html = await (await fetch(`${base}/dashboard/`)).text();
  const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)![1]!;
  const asset = await fetch(`${base}${script}`);
  t.equal(asset.status, 200);
  t.match(asset.headers.get('content-type'), /javascript/);
  t.match(asset.headers.get('cache-control'), /max-age=31536000, immutable/);
  const missing = await fetch(`${base}/dashboard/assets/nothing.js`);
  t.equal(missing.status, 404);
  const unknownApi = await fetch(`${base}/dashboard/api/nothing`);
  t.equal(unknownApi.status, 404);
  t.equal(((await unknownApi.json()) as { error: { code: string } }).error.code, 'NOT_FOUND');
});

t.test('in development (plain http on a developer’s machine) the cookie is not Secure', async (t) => {
  // Below today's password cost only under APP_ENV=test: this gateway hashes at today's (the user's hash is rehashed).
  const dev = await startDashboardPlatform(t, {
    env: { APP_ENV: 'development', PASSWORD_HASH_COST: String(PASSWORD_COST) },
  });
  const m = await dashboardMerchant(dev.platform);
  const signed = await signInHttp(dev.platform.baseUrl, m.email);
  t.equal(signed.status, 201);
  t.match(signed.setCookie, /^dash_session=[A-Za-z0-9_-]{43}; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Strict$/);
});
