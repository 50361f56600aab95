import t, { type Test } from 'tap';
import { dashboardMerchant, sessionRequest, signInHttp, startDashboardPlatform } from '../helpers/dashboard.ts';

// The dashboard's own routes refuse bad input with the contract's envelope (never a 500), with exact statuses.
const { platform } = await startDashboardPlatform(t);
const base = platform.baseUrl;
const scale = await dashboardMerchant(platform, 'scale');
const session = await signInHttp(base, scale.email);
const call = (method: string, path: string, body?: unknown) => sessionRequest(base, session, method, path, body);

const refused = (
  t: Test,
  res: Awaited<ReturnType<typeof call>>,
  status: number,
  code: string,
  details?: { path: string }[],
) => {
  t.equal(res.status, status);
  t.equal(res.body.error.code, code);
  t.equal(res.body.error.request_id, res.headers.get('x-request-id'));
  if (details) t.match(res.body.error.details, details);
};

t.test('keys: scopes and rate limits are checked', async (t) => {
  refused(t, await call('POST', '/dashboard/api/keys', { scopes: [] }), 400, 'INVALID_INPUT', [{ path: 'scopes' }]);
  refused(t, await call('POST', '/dashboard/api/keys', { scopes: ['admin'] }), 400, 'INVALID_INPUT', [
    { path: 'scopes[0]' },
  ]);
  refused(t, await call('POST', '/dashboard/api/keys', { scopes: ['read', 'read'] }), 400, 'INVALID_INPUT', [
    { path: 'scopes' },
  ]);
  refused(
    t,
    await call('POST', '/dashboard/api/keys', { scopes: ['read'], rate_limit_per_min: 59 }),
    400,
    'INVALID_INPUT',
    [{ path: 'rate_limit_per_min' }],
  );
  refused(t, await call('POST', '/dashboard/api/keys', { scopes: ['read'], extra: 1 }), 400, 'INVALID_INPUT', [
    { path: 'extra' },
  ]);
  const created = await call('POST', '/dashboard/api/keys', { scopes: ['read'], rate_limit_per_min: 120 });
  t.equal(created.status, 201, 'scale sets a rate limit');
  t.equal(created.body.rate_limit_per_min, 120);
  const growth = await dashboardMerchant(platform, 'growth');
  const growthSession = await signInHttp(base, growth.email);
  const limited = await sessionRequest(base, growthSession, 'POST', '/dashboard/api/keys', {
    scopes: ['read'],
    rate_limit_per_min: 120,
  });
  refused(t, limited, 402, 'PLAN_REQUIRED');
  refused(t, await call('POST', '/dashboard/api/keys/key_nope/revoke'), 404, 'NOT_FOUND');
  refused(t, await call('GET', '/dashboard/api/keys/%E0%A4%A/audit'), 404, 'NOT_FOUND');
  await call('POST', `/dashboard/api/keys/${created.body.id}/revoke`);
  refused(
    t,
    await call('PATCH', `/dashboard/api/keys/${created.body.id}`, { rate_limit_per_min: 300 }),
    409,
    'CONFLICT',
  );
});

t.test('bodies: not JSON, malformed JSON, too large', async (t) => {
  const res = await fetch(`${base}/dashboard/api/keys`, {
    method: 'POST',
    headers: { cookie: `dash_session=${session.cookie}`, 'x-csrf-token': session.csrf!, 'content-type': 'text/plain' },
    body: 'scopes=read',
  });
  t.equal(res.status, 415);
  const bad = await fetch(`${base}/dashboard/api/keys`, {
    method: 'POST',
    headers: {
      cookie: `dash_session=${session.cookie}`,
      'x-csrf-token': session.csrf!,
      'content-type': 'application/json',
    },
    body: '{"scopes":',
  });
  t.equal(bad.status, 400);
  t.equal(((await bad.json()) as { error: { code: string } }).error.code, 'INVALID_INPUT');
  const big = await call('PATCH', '/dashboard/api/settings', { tracking_host: 'x'.repeat(70_000) });
  t.equal(big.status, 413);
});

t.test('settings, tiers and users: the services’ schema, duplicates', async (t) => {
  refused(t, await call('PATCH', '/dashboard/api/settings', {}), 400, 'INVALID_INPUT');
  refused(t, await call('PATCH', '/dashboard/api/settings', { default_rate: 1.5 }), 400, 'INVALID_INPUT', [
    { path: 'default_rate' },
  ]);
  refused(
    t,
    await call('PATCH', '/dashboard/api/settings', { level_rates: [0.1, 0.1, 0.1, 0.1, 0.1, 0.1] }),
    400,
    'INVALID_INPUT',
    [{ path: 'level_rates' }],
  );
  refused(
    t,
    await call('PATCH', '/dashboard/api/settings', {
      commission_rules: { signup: { kind: 'flat', amount: '5.123456' } },
    }),
    400,
    'INVALID_INPUT',
  );
  refused(t, await call('PATCH', '/dashboard/api/settings', { nope: 1 }), 400, 'INVALID_INPUT', [{ path: 'nope' }]);
  const ok = await call('PATCH', '/dashboard/api/settings', { hold_days: 7 });
  t.equal(ok.status, 200);
  t.equal(ok.body.hold_days, 7);
  t.equal(ok.body.default_rate, 0.1, 'the rest keeps its value (the default)');
  refused(t, await call('POST', '/dashboard/api/tiers', { name: '', rate: 0.1, threshold: 0 }), 400, 'INVALID_INPUT', [
    { path: 'name' },
  ]);
  refused(
    t,
    await call('POST', '/dashboard/api/tiers', { name: 'Gold', rate: 2, threshold: 0 }),
    400,
    'INVALID_INPUT',
    [{ path: 'rate' }],
  );
  refused(
    t,
    await call('POST', '/dashboard/api/users', { email: scale.email, password: 'long enough pw' }),
    409,
    'CONFLICT',
  );
  refused(
    t,
    await call('POST', '/dashboard/api/users', { email: 'x@example.com', password: 'short' }),
    400,
    'INVALID_INPUT',
    [{ path: 'password' }],
  );
});

t.test('webhook routes: wrong password, unknown endpoint, bad range', async (t) => {
  refused(
    t,
    await call('POST', '/dashboard/api/webhook_endpoints/we_nope/reveal_secret', { password: 'correct horse battery' }),
    404,
    'NOT_FOUND',
  );
  refused(
    t,
    await call('POST', '/dashboard/api/webhook_endpoints/we_nope/reveal_secret', { password: 'wrong' }),
    403,
    'FORBIDDEN',
  );
  const since = new Date().toISOString();
  refused(
    t,
    await call('GET', `/dashboard/api/webhook_endpoints/we_nope/replay_count?since=${since}&until=${since}`),
    400,
    'INVALID_INPUT',
    [{ path: 'until' }],
  );
  refused(
    t,
    await call('GET', '/dashboard/api/webhook_endpoints/we_nope/replay_count?since=yesterday&until=now'),
    400,
    'INVALID_INPUT',
    [{ path: 'since' }],
  );
  const until = new Date(Date.now() + 1000).toISOString();
  refused(
    t,
    await call('GET', `/dashboard/api/webhook_endpoints/we_nope/replay_count?since=${since}&until=${until}`),
    404,
    'NOT_FOUND',
  );
  t.notOk(
    platform.logs.some((l) => l.includes('"level":"error"')),
    'nothing logged as an error: no 500 path was taken',
  );
});

t.test('an unknown route or a method a route does not have is 404, with no Allow header', async (t) => {
  for (const [method, path] of [
    ['OPTIONS', '/dashboard/api/keys'],
    ['PUT', '/dashboard/api/keys'],
    ['DELETE', '/dashboard/api/settings'],
    ['PROPFIND', '/dashboard/api/session'],
    ['GET', '/dashboard/api/nope'],
    ['POST', '/dashboard/api/keys/x/y'],
  ] as const) {
    const res = await call(method, path);
    t.equal(res.status, 404, `${method} ${path}`);
    t.equal(res.body?.error?.code, 'NOT_FOUND', `${method} ${path}: the envelope`);
    t.notOk(res.headers.get('allow'), `${method} ${path}: no Allow header reveals the routes`);
  }
});
