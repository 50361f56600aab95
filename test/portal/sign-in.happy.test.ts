import t from 'tap';
import { waitForMails } from '../helpers/invitations.ts';
import { approvedAffiliate, newestPortalLink, openLink, portal, signIn, startPortalPlatform } from './backend.ts';

/** The e-mailed link → a session of its own → the portal API answers the affiliate's own data. */
t.test('portal sign-in by e-mailed link', async (t) => {
  const { platform } = await startPortalPlatform(t);
  const base = platform.baseUrl;
  const acme = await platform.merchant({ name: 'Acme' });
  const zeta = await platform.merchant({ name: 'Zeta' });
  const email = `jane-${Date.now()}@example.com`;
  const atAcme = await approvedAffiliate(acme, email);
  const atZeta = await approvedAffiliate(zeta, email.toUpperCase());

  const asked = await portal(base, null, 'POST', '/portal/api/sign-in', { email });
  t.equal(asked.status, 202);
  t.same(asked.body, {});
  const { url, mail } = await newestPortalLink(base, email);
  t.equal(mail.subject, 'Your sign-in link to the affiliate portal');
  t.match(url, /^https:\/\/portal\.test\/portal\/link\/[A-Za-z0-9_-]{43}$/, 'an absolute link on PUBLIC_BASE_URL');
  t.ok(mail.text.includes(url), 'the plain-text part carries the link');
  t.match(mail.text, /2 programmes \(Acme, Zeta\)/);

  const opened = await openLink(base, url);
  t.equal(opened.status, 303);
  t.equal(opened.location, '/portal/');
  t.match(opened.setCookie, /portal_session=[A-Za-z0-9_-]{43}/);
  t.match(opened.setCookie, /Path=\/portal/);
  t.match(opened.setCookie, /HttpOnly/);
  t.match(opened.setCookie, /SameSite=Lax/);
  t.notMatch(opened.setCookie, /dash_session/);

  const cookie = opened.cookie!;
  const session = await portal(base, { cookie }, 'GET', '/portal/api/session');
  t.equal(session.status, 200);
  t.match(session.body, {
    email,
    embedded: false,
    return_url: null,
    affiliate: { id: atAcme.id, status: 'approved' },
    programme: { merchant_name: 'Acme', currency: 'USD', slug: null },
  });
  t.same(session.body.programmes, [
    { affiliate_id: atAcme.id, merchant_name: 'Acme' },
    { affiliate_id: atZeta.id, merchant_name: 'Zeta' },
  ]);
  const csrf = session.body.csrf_token as string;
  t.match(csrf, /^[A-Za-z0-9_-]{43}$/);

  const home = await portal(base, { cookie }, 'GET', '/portal/api/home');
  t.equal(home.status, 200);
  t.match(home.body, {
    referral_link: atAcme.referral_url,
    coupons: [],
    currency: 'USD',
    this_month: { clicks: 0, conversions: 0, earnings: '0.00' },
  });

  const team = await portal(base, { cookie }, 'GET', '/portal/api/team');
  t.same(team.body, { recruit_link: null, children: 0 }, 'no recruit link while the programme has no slug');
  await platform.sql`insert into programmes (merchant_id, slug) values (${acme.id}, 'acme-partners')`;
  const withSlug = await portal(base, { cookie }, 'GET', '/portal/api/team');
  t.same(withSlug.body, { recruit_link: `https://portal.test/p/acme-partners?ref=${atAcme.slug}`, children: 0 });

  const perf = await portal(base, { cookie }, 'GET', '/portal/api/performance?group_by=week');
  t.equal(perf.status, 200);
  t.match(perf.body, { object: 'analytics', group_by: 'week', timezone: 'UTC', currency: 'USD' });
  t.ok(Array.isArray(perf.body.data) && perf.body.data.length > 0, 'every bucket present');

  const switched = await portal(base, { cookie, csrf }, 'POST', '/portal/api/session/programme', {
    affiliate_id: atZeta.id,
  });
  t.equal(switched.status, 200);
  t.match(switched.body, { affiliate: { id: atZeta.id }, programme: { merchant_name: 'Zeta' } });
  const again = await portal(base, { cookie }, 'GET', '/portal/api/home');
  t.equal(again.body.referral_link, atZeta.referral_url, 'the switch applies to the next request');

  const out = await portal(base, { cookie, csrf }, 'POST', '/portal/api/sign-out');
  t.equal(out.status, 204);
  t.equal((await portal(base, { cookie }, 'GET', '/portal/api/session')).status, 401, 'signed out everywhere');
});

t.test('the portal pages are served, framed by nobody without a session', async (t) => {
  const { platform } = await startPortalPlatform(t);
  for (const path of ['/portal/sign-in', '/portal/', '/portal/commissions', '/portal/team']) {
    const res = await fetch(platform.baseUrl + path);
    t.match(res.headers.get('content-security-policy'), /frame-ancestors 'none'/, path);
    await res.arrayBuffer();
  }
});

t.test('a sign-in for an address of no affiliate mails nothing and answers the same', async (t) => {
  const { platform } = await startPortalPlatform(t);
  const m = await platform.merchant();
  const known = await approvedAffiliate(m);
  const unknown = await portal(platform.baseUrl, null, 'POST', '/portal/api/sign-in', { email: 'nobody@example.com' });
  const real = await portal(platform.baseUrl, null, 'POST', '/portal/api/sign-in', { email: known.email });
  t.equal(unknown.status, real.status);
  t.same(unknown.body, real.body);
  await waitForMails(platform.baseUrl, known.email);
  const none = await fetch(`${platform.baseUrl}/dev/mailbox`).then(
    (r) => r.json() as Promise<{ mails: { to: string }[] }>,
  );
  t.notOk(none.mails.some((m) => m.to === 'nobody@example.com'));
  const s = await signIn(platform.baseUrl, known.email);
  t.same(s.session.programmes, [{ affiliate_id: known.id, merchant_name: s.session.programme.merchant_name }]);
});
