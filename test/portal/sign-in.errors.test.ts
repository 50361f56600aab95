import t from 'tap';
import { signInHttp, createDashboardUser } from '../helpers/dashboard.ts';
import { PORTAL_LINK_LIMITS } from '@platform/gateway/surfaces/portal/limits';
import {
  approvedAffiliate,
  mailCount,
  newestPortalLink,
  openLink,
  portal,
  sessionOf,
  signIn,
  startPortalPlatform,
} from './backend.ts';

/** Every route of /portal/api, with a body each accepts. */
const ROUTES: [string, string, unknown?][] = [
  ['GET', '/portal/api/session'],
  ['POST', '/portal/api/session/programme', { affiliate_id: 'aff_01jd3t6m0s2e4w5x6y7z8a9b0c' }],
  ['POST', '/portal/api/sign-out', {}],
  ['GET', '/portal/api/home'],
  ['GET', '/portal/api/performance'],
  ['GET', '/portal/api/commissions'],
  ['GET', '/portal/api/payouts'],
  ['GET', '/portal/api/payout-settings'],
  ['POST', '/portal/api/payout-settings/link', {}],
  ['PUT', '/portal/api/payout-details', { method: 'paypal', paypal_email: 'jane@example.com' }],
  ['POST', '/portal/api/tax-forms', { form_type: 'W-9' }],
  ['GET', '/portal/api/team'],
];

t.test('links: used, expired, unknown, or of an affiliate no longer approved', async (t) => {
  const { platform } = await startPortalPlatform(t);
  const base = platform.baseUrl;
  const m = await platform.merchant();
  const a = await approvedAffiliate(m);

  await portal(base, null, 'POST', '/portal/api/sign-in', { email: a.email });
  const { url } = await newestPortalLink(base, a.email);
  t.equal((await openLink(base, url)).status, 303, 'the first opening signs in');
  const second = await openLink(base, url);
  t.equal(second.status, 410, 'a used link');
  t.match(second.text, /This link has expired/);
  t.match(second.text, /href="\/portal\/sign-in"/);
  t.notOk(second.cookie, 'no session');

  await portal(base, null, 'POST', '/portal/api/sign-in', { email: a.email });
  const { url: late } = await newestPortalLink(base, a.email, 2);
  await platform.sql`update portal_links set expires_at = now() - interval '1 second' where used_at is null`;
  t.equal((await openLink(base, late)).status, 410, 'an expired link');

  for (const token of ['x'.repeat(43), 'short', '%00', 'a'.repeat(300)]) {
    const res = await openLink(base, `https://portal.test/portal/link/${token}`);
    t.equal(res.status, 410, `unknown token ${token.slice(0, 10)}`);
  }

  await portal(base, null, 'POST', '/portal/api/sign-in', { email: a.email });
  const { url: third } = await newestPortalLink(base, a.email, 3);
  const s = await sessionOf(base, third);
  t.equal((await m.client.patch(`/api/v1/affiliates/${a.id}`, { status: 'suspended' })).status, 200);
  t.equal((await portal(base, s, 'GET', '/portal/api/session')).status, 401, 'suspension ends the session at once');
  const before = await mailCount(base, a.email);
  t.equal((await portal(base, null, 'POST', '/portal/api/sign-in', { email: a.email })).status, 202);
  await new Promise((r) => setTimeout(r, 300));
  t.equal(await mailCount(base, a.email), before, 'no link for a suspended affiliate');
});

t.test('sign-in limits per address and per IP', async (t) => {
  const { platform } = await startPortalPlatform(t);
  const base = platform.baseUrl;
  const m = await platform.merchant();
  const a = await approvedAffiliate(m);
  // One client's share of an address (the ceiling from many clients: link-limits.security.test.ts).
  for (let i = 0; i < PORTAL_LINK_LIMITS.perAddressAndIp; i++)
    t.equal((await portal(base, null, 'POST', '/portal/api/sign-in', { email: a.email })).status, 202);
  const refused = await portal(base, null, 'POST', '/portal/api/sign-in', { email: a.email.toUpperCase() });
  t.equal(refused.status, 429, 'per address from this client, whatever its case');
  t.equal(refused.body.error.code, 'RATE_LIMITED');
  t.ok(Number(refused.headers.get('retry-after')) > 0);
  const unknown = 'nobody@example.com';
  for (let i = 0; i < PORTAL_LINK_LIMITS.perAddressAndIp; i++)
    await portal(base, null, 'POST', '/portal/api/sign-in', { email: unknown });
  t.equal(
    (await portal(base, null, 'POST', '/portal/api/sign-in', { email: unknown })).status,
    429,
    'an unknown address is limited alike: the limit tells nothing',
  );
  // The per-IP bound: fresh addresses from the same client, up to the limit (the 2 × 6 above counted too).
  let status = 202;
  for (let i = 0; i < PORTAL_LINK_LIMITS.perIp && status === 202; i++)
    status = (await portal(base, null, 'POST', '/portal/api/sign-in', { email: `x${i}@example.com` })).status;
  t.equal(status, 429, 'per IP');
});

t.test('bad input answers 400 or 415 in the error envelope', async (t) => {
  const { platform } = await startPortalPlatform(t, { commissions: true });
  const base = platform.baseUrl;
  const cases: [unknown, number][] = [
    [{}, 400],
    [{ email: 'not an address' }, 400],
    [{ email: `${'a'.repeat(250)}@example.com` }, 400],
    [{ email: 'a@example.com', extra: 1 }, 400],
    [{ email: 42 }, 400],
    ['{not json', 400],
    [[], 400],
  ];
  for (const [body, status] of cases) {
    const res = await portal(base, null, 'POST', '/portal/api/sign-in', body);
    t.equal(res.status, status, JSON.stringify(body).slice(0, 40));
    t.ok(res.body?.error?.code, 'the envelope');
  }
  const form = await portal(base, null, 'POST', '/portal/api/sign-in', 'email=a@example.com', {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.equal(form.status, 415, 'a form post from another site is not JSON');

  const m = await platform.merchant();
  const a = await approvedAffiliate(m);
  const s = await signIn(base, a.email);
  for (const q of ['limit=0', 'limit=101', 'limit=x', 'starting_after=forged.cursor', 'other=1'])
    t.equal((await portal(base, s, 'GET', `/portal/api/commissions?${q}`)).status, 400, `commissions ${q}`);
  for (const q of ['group_by=country', 'start=yesterday', 'timezone=Mars/Olympus'])
    t.equal((await portal(base, s, 'GET', `/portal/api/performance?${q}`)).status, 400, `performance ${q}`);
  for (const body of [{}, { affiliate_id: 5 }, { affiliate_id: 'x'.repeat(65) }])
    t.equal((await portal(base, s, 'POST', '/portal/api/session/programme', body)).status, 400);
  // A tax form needs a fresh link first (fresh-link.security shows its 400s once it has one).
  t.equal((await portal(base, s, 'POST', '/portal/api/tax-forms', { form_type: 'W-9' })).status, 403);
});

t.test('without a session 401; without the CSRF header 403', async (t) => {
  const { platform } = await startPortalPlatform(t);
  const base = platform.baseUrl;
  const m = await platform.merchant();
  const a = await approvedAffiliate(m);
  const s = await signIn(base, a.email);
  await createDashboardUser(platform.sql, m.id, 'owner@example.com');
  const dash = await signInHttp(base, 'owner@example.com');

  for (const [method, path, body] of ROUTES) {
    t.equal((await portal(base, null, method, path, body)).status, 401, `${method} ${path} without a session`);
    const bogus = { cookie: 'A'.repeat(43), csrf: 'B'.repeat(43) };
    t.equal((await portal(base, bogus, method, path, body)).status, 401, `${method} ${path} unknown session`);
    const asDashboard = await portal(base, null, method, path, body, {
      headers: { cookie: `dash_session=${dash.cookie}`, 'x-csrf-token': dash.csrf! },
    });
    t.equal(asDashboard.status, 401, `${method} ${path}: a dashboard session is not a portal session`);
    if (method === 'GET') continue;
    t.equal((await portal(base, s, method, path, body, { csrf: false })).status, 403, `${method} ${path} no CSRF`);
    const wrong = await portal(base, { cookie: s.cookie, csrf: dash.csrf! }, method, path, body);
    t.equal(wrong.status, 403, `${method} ${path} another session's CSRF`);
  }
  t.equal((await portal(base, s, 'GET', '/portal/api/session')).status, 200, 'the session still lives');
});

t.test('payout details need a fresh link', async (t) => {
  const { platform } = await startPortalPlatform(t);
  const base = platform.baseUrl;
  const m = await platform.merchant();
  const a = await approvedAffiliate(m);
  const s = await signIn(base, a.email);
  const settings = await portal(base, s, 'GET', '/portal/api/payout-settings');
  t.match(settings.body, {
    payout_details: null,
    tax_forms: [],
    can_change_payout_details: false,
    can_change_until: null,
  });
  const refused = await portal(base, s, 'PUT', '/portal/api/payout-details', {
    method: 'paypal',
    paypal_email: 'thief@example.com',
  });
  t.equal(refused.status, 403);
  t.equal(refused.body.error.code, 'FORBIDDEN');
  const details = await m.client.get(`/api/v1/affiliates/${a.id}/payout_details`);
  t.equal(details.body.method, null, 'nothing changed');

  t.equal((await portal(base, s, 'POST', '/portal/api/payout-settings/link', {})).status, 202);
  const { url } = await newestPortalLink(base, a.email, 2);
  await platform.sql`update portal_links set expires_at = now() - interval '1 second' where used_at is null`;
  t.equal((await openLink(base, url)).status, 410, 'an expired payout-details link opens nothing');

  t.equal((await portal(base, s, 'POST', '/portal/api/payout-settings/link', {})).status, 202);
  const { url: fresh } = await newestPortalLink(base, a.email, 3);
  const opened = await sessionOf(base, fresh);
  await platform.sql`update portal_sessions set payout_details_until = now() - interval '1 second'`;
  const late = await portal(base, opened, 'PUT', '/portal/api/payout-details', {
    method: 'paypal',
    paypal_email: 'late@example.com',
  });
  t.equal(late.status, 403, 'after its 15 minutes the session cannot change them');
});
