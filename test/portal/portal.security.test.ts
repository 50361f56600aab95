import t from 'tap';
import { approvedCommissions } from '../helpers/payouts.ts';
import { setMerchantSettings } from '../helpers/commissions.ts';
import {
  approvedAffiliate,
  createPortalSession,
  newestPortalLink,
  openLink,
  portal,
  sessionOf,
  signIn,
  startPortalPlatform,
  type Merchant,
} from './backend.ts';

/**
 * Isolation, route by route: an affiliate signed in to the portal sees its own data only, never another affiliate's
 * of the same merchant nor another merchant's, even when the same person is both; ids of others answer 404; an
 * embedded session stays on its affiliate; the pages may be framed by the signed-in programme's origins only.
 */
t.test('every /portal/api route answers the signed-in affiliate only', async (t) => {
  const { platform, commissions } = await startPortalPlatform(t, { commissions: true });
  const base = platform.baseUrl;
  const acme = await platform.merchant({ name: 'Acme' });
  const bravo = await platform.merchant({ name: 'Bravo' });
  for (const m of [acme, bravo])
    await setMerchantSettings(platform.sql, m.id, ['default_rate=0.1', 'hold_days=0', 'min_payout="1"']);
  const email = `jane-${Date.now()}@example.com`;
  const a1 = await approvedAffiliate(acme, email);
  const a2 = await approvedAffiliate(acme);
  const b1 = await approvedAffiliate(bravo, email);
  const b2 = await approvedAffiliate(bravo);
  const earn = (m: Merchant, id: string, amounts: string[]) =>
    approvedCommissions(
      platform,
      commissions!,
      m.id,
      id,
      amounts.map((amount) => ({ amount })),
    );
  const a1Commissions = await earn(acme, a1.id, ['100.00']);
  await earn(acme, a2.id, ['200.00', '210.00']);
  await earn(bravo, b1.id, ['300.00']);
  await earn(bravo, b2.id, ['400.00']);
  const acmePayouts = (await acme.client.post('/api/v1/payouts')).body.data as { id: string; affiliate_id: string }[];
  const bravoPayouts = (await bravo.client.post('/api/v1/payouts')).body.data as { id: string; affiliate_id: string }[];
  t.equal(acmePayouts.length, 2);
  t.equal(bravoPayouts.length, 2);
  t.equal((await acme.client.post('/api/v1/coupons', { code: 'ANNA10', affiliate_id: a1.id })).status, 201);
  t.equal((await acme.client.post('/api/v1/coupons', { code: 'OTHER10', affiliate_id: a2.id })).status, 201);
  t.equal((await bravo.client.post('/api/v1/coupons', { code: 'BRAVO10', affiliate_id: b1.id })).status, 201);
  for (const [m, id] of [
    [acme, a2.id],
    [bravo, b1.id],
  ] as const) {
    const put = await m.client.request('PUT', `/api/v1/affiliates/${id}/payout_details`, {
      body: { method: 'paypal', paypal_email: `${id}@example.com` },
    });
    t.equal(put.status, 200);
  }
  const child = await acme.client.post('/api/v1/affiliates', {
    email: `child-${Date.now()}@example.com`,
    parent_email: a2.email,
  });
  t.equal(child.status, 201);

  const s = await signIn(base, email);
  t.equal(s.session.affiliate.id, a1.id, 'the first programme by name: Acme');

  const commissionsPage = await portal(base, s, 'GET', '/portal/api/commissions');
  t.same(
    commissionsPage.body.data.map((c: { id: string }) => c.id),
    a1Commissions,
  );
  t.match(commissionsPage.body.data[0], { status: 'approved', amount: '10.00', currency: 'USD', order: /^••••.{4}$/ });
  t.same(Object.keys(commissionsPage.body.data[0]).sort(), [
    'amount',
    'created_at',
    'currency',
    'id',
    'order',
    'status',
  ]);
  t.equal(commissionsPage.body.has_more, false);

  const payouts = await portal(base, s, 'GET', '/portal/api/payouts');
  t.same(
    payouts.body.data.map((p: { id: string }) => p.id),
    acmePayouts.filter((p) => p.affiliate_id === a1.id).map((p) => p.id),
  );
  t.match(payouts.body.data[0], { amount: '10.00', currency: 'USD', paid_at: null });

  const home = await portal(base, s, 'GET', '/portal/api/home');
  t.same(home.body.coupons, [{ code: 'ANNA10' }]);
  t.equal(home.body.referral_link, a1.referral_url);

  const settings = await portal(base, s, 'GET', '/portal/api/payout-settings');
  t.equal(settings.body.payout_details, null, "another affiliate's details are not shown");
  t.same(settings.body.tax_forms, []);

  const team = await portal(base, s, 'GET', '/portal/api/team');
  t.equal(team.body.children, 0, "another affiliate's recruits are not counted");

  // Filters are the session's: none can be given.
  for (const path of [
    `/portal/api/commissions?affiliate_id=${a2.id}`,
    `/portal/api/payouts?affiliate_id=${a2.id}`,
    `/portal/api/performance?affiliate_id=${a2.id}`,
  ])
    t.equal((await portal(base, s, 'GET', path)).status, 400, path);
  // A cursor of another affiliate's list is refused (the services sign cursors over their filters).
  const a2Page = await acme.client.get(`/api/v1/commissions?affiliate_id=${a2.id}&limit=1`);
  t.ok(a2Page.body.next_cursor);
  const foreign = await portal(base, s, 'GET', `/portal/api/commissions?starting_after=${a2Page.body.next_cursor}`);
  t.equal(foreign.status, 400);

  // The performance figures are the affiliate's: never the others' commissions (a2's 41, b1's 30), only its own 10
  // once the analytics have counted it.
  const perf = await portal(base, s, 'GET', '/portal/api/performance?group_by=month');
  t.equal(perf.status, 200);
  const mine = perf.body.data.reduce((n: number, r: { commissions: string }) => n + Number(r.commissions), 0);
  t.ok(mine === 0 || mine === 10, `only its own commissions (${mine})`);

  // Switching: the same person's other programme yes; another affiliate of either merchant, 404.
  for (const id of [a2.id, b2.id, child.body.id, 'aff_01jd3t6m0s2e4w5x6y7z8a9b0c', 'nonsense']) {
    const res = await portal(base, s, 'POST', '/portal/api/session/programme', { affiliate_id: id });
    t.equal(res.status, 404, `switch to ${id}`);
  }
  const switched = await portal(base, s, 'POST', '/portal/api/session/programme', { affiliate_id: b1.id });
  t.equal(switched.status, 200);
  const bHome = await portal(base, s, 'GET', '/portal/api/home');
  t.same(bHome.body.coupons, [{ code: 'BRAVO10' }]);
  const bSettings = await portal(base, s, 'GET', '/portal/api/payout-settings');
  t.equal(bSettings.body.payout_details.method, 'paypal', "b1's own details, masked");
  t.notMatch(JSON.stringify(bSettings.body), b1.id + '@', 'masked');
  const bCommissions = await portal(base, s, 'GET', '/portal/api/commissions');
  t.same(
    bCommissions.body.data.map((c: { amount: string }) => c.amount),
    ['30.00'],
  );
});

t.test('an embedded session stays on its affiliate', async (t) => {
  const { platform } = await startPortalPlatform(t);
  const base = platform.baseUrl;
  const acme = await platform.merchant({ name: 'Acme' });
  const bravo = await platform.merchant({ name: 'Bravo' });
  const email = `sam-${Date.now()}@example.com`;
  const a1 = await approvedAffiliate(acme, email);
  const b1 = await approvedAffiliate(bravo, email);
  const made = await createPortalSession(acme, a1.id);
  t.equal(made.status, 201);
  const opened = await openLink(base, made.body.url);
  t.equal(opened.status, 303);
  t.match(opened.setCookie, /SameSite=None/);
  t.match(opened.setCookie, /Secure/);
  t.match(opened.setCookie, /Partitioned/);
  const s = { cookie: opened.cookie! };
  const session = await portal(base, s, 'GET', '/portal/api/session');
  t.match(session.body, { embedded: true, affiliate: { id: a1.id }, programmes: [] });
  const csrf = { ...s, csrf: session.body.csrf_token };
  const res = await portal(base, csrf, 'POST', '/portal/api/session/programme', { affiliate_id: b1.id });
  t.equal(res.status, 404, "the same person's other programme is not the embedding merchant's to show");
  const still = await portal(base, s, 'GET', '/portal/api/session');
  t.equal(still.body.affiliate.id, a1.id);
  // Bravo cannot make a session for Acme's affiliate.
  t.equal((await createPortalSession(bravo, a1.id)).status, 404);
});

t.test("frame-ancestors are the signed-in programme's origins only", async (t) => {
  const { platform } = await startPortalPlatform(t);
  const base = platform.baseUrl;
  const acme = await platform.merchant({ name: 'Acme' });
  const bravo = await platform.merchant({ name: 'Bravo' });
  await platform.sql`
    insert into programmes (merchant_id, slug, frame_origins)
    values (${acme.id}, 'acme', '{https://shop-a.example}'), (${bravo.id}, 'bravo', '{https://shop-b.example,https://b2.example:8443}')`;
  const email = `kim-${Date.now()}@example.com`;
  await approvedAffiliate(acme, email);
  const b1 = await approvedAffiliate(bravo, email);
  const page = async (cookie?: string) => {
    const res = await fetch(`${base}/portal/`, { headers: cookie ? { cookie: `portal_session=${cookie}` } : {} });
    await res.arrayBuffer();
    return { csp: res.headers.get('content-security-policy') ?? '', xfo: res.headers.get('x-frame-options') };
  };
  const anonymous = await page();
  t.match(anonymous.csp, /frame-ancestors 'none'/);
  t.equal(anonymous.xfo, 'DENY');

  const s = await signIn(base, email);
  const acmePage = await page(s.cookie);
  t.match(acmePage.csp, /frame-ancestors https:\/\/shop-a\.example(;|$)/);
  t.notMatch(acmePage.csp, /shop-b/);
  t.equal(acmePage.xfo, null);

  await portal(base, s, 'POST', '/portal/api/session/programme', { affiliate_id: b1.id });
  const bravoPage = await page(s.cookie);
  t.match(bravoPage.csp, /frame-ancestors https:\/\/shop-b\.example https:\/\/b2\.example:8443(;|$)/);
  t.notMatch(bravoPage.csp, /shop-a/);

  // The embed link's redirect carries the same policy.
  const made = await createPortalSession(acme, s.session.affiliate.id);
  const opened = await openLink(base, made.body.url);
  t.match(opened.headers.get('content-security-policy'), /frame-ancestors https:\/\/shop-a\.example(;|$)/);
  const { url } = await newestPortalLink(base, email);
  t.ok(url, 'the sign-in mail');
  t.ok(await sessionOf(base, made.body.url).catch(() => 'used'), 'an embed link works once');
});
