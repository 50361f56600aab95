import t from 'tap';
import { waitForMails } from '../helpers/invitations.ts';
import { w9 } from '../tax-forms/setup.ts';
import {
  approvedAffiliate,
  createPortalSession,
  newestPortalLink,
  openLink,
  portal,
  sessionOf,
  signIn,
  startPortalPlatform,
} from './backend.ts';

/**
 * What a portal session alone may not do, and what ends it. Tax forms (legal name, TIN, address) need the fresh
 * mailed link that payout details need, so a session taken over, or one a merchant opened for its own app, cannot
 * file one. Suspending or rejecting an affiliate ends its sessions and spends its unused links, so a re-approval
 * brings none of them back.
 */
const { platform } = await startPortalPlatform(t);
const base = platform.baseUrl;
const m = await platform.merchant({ name: 'Acme' });

t.test('a tax form needs a session a fresh link opened; a plain or embedded one is refused', async (t) => {
  const a = await approvedAffiliate(m);
  const plain = await signIn(base, a.email);
  const refused = await portal(base, plain, 'POST', '/portal/api/tax-forms', w9('123456789'));
  t.equal(refused.status, 403, 'a mailed sign-in session');
  t.equal(refused.body.error.code, 'FORBIDDEN');
  const embedded = await sessionOf(base, (await createPortalSession(m, a.id)).body.url);
  t.equal((await portal(base, embedded, 'POST', '/portal/api/tax-forms', w9('123456780'))).status, 403, 'embedded');
  const [stored] = await platform.sql<{ n: number }[]>`
    select count(*)::int as n from tax_forms where merchant_id = ${m.id} and affiliate_id = ${a.id}`;
  t.equal(stored!.n, 0, 'nothing was filed');

  t.equal((await portal(base, plain, 'POST', '/portal/api/payout-settings/link', {})).status, 202);
  const { url } = await newestPortalLink(base, a.email, 2);
  const fresh = await sessionOf(base, url);
  const lacking = await portal(base, fresh, 'POST', '/portal/api/tax-forms', { form_type: 'W-9' });
  t.equal(lacking.status, 400, 'with the fresh link, the service names what a form lacks');
  t.ok(lacking.body.error.details.length > 0);
  t.equal((await portal(base, fresh, 'POST', '/portal/api/tax-forms', w9('123456789'))).status, 201, 'and files one');
});

t.test('a change of payout details in the portal is audited as the portal, and mailed', async (t) => {
  const a = await approvedAffiliate(m);
  const s = await signIn(base, a.email);
  await portal(base, s, 'POST', '/portal/api/payout-settings/link', {});
  const fresh = await sessionOf(base, (await newestPortalLink(base, a.email, 2)).url);
  const put = await portal(base, fresh, 'PUT', '/portal/api/payout-details', {
    method: 'paypal',
    paypal_email: 'new.address@example.com',
  });
  t.equal(put.status, 200);
  const history = await m.client.get(`/api/v1/affiliates/${a.id}/payout_details/history`);
  t.match(history.body.data, [{ source: 'portal', actor_id: a.id, after: { method: 'paypal' } }]);
  const mails = await waitForMails(base, a.email, 3);
  const notice = mails.find((x) => x.subject === 'Your payout details for Acme were changed');
  t.ok(notice, 'the affiliate is mailed');
  t.notMatch(notice!.text, /new\.address/, 'masked in the mail');
  t.same(notice!.links, ['https://portal.test/portal/payout-settings'], 'an absolute link');
});

t.test('suspended: its sessions end and its unused links are spent; a re-approval brings none back', async (t) => {
  const a = await approvedAffiliate(m);
  const s = await signIn(base, a.email);
  t.equal((await portal(base, s, 'GET', '/portal/api/session')).status, 200);
  // A link mailed before the suspension and never opened.
  t.equal((await portal(base, null, 'POST', '/portal/api/sign-in', { email: a.email })).status, 202);
  const { url: unused } = await newestPortalLink(base, a.email, 2);
  const embedLink = (await createPortalSession(m, a.id)).body.url as string;

  t.equal((await m.client.patch(`/api/v1/affiliates/${a.id}`, { status: 'suspended' })).status, 200);
  const [left] = await platform.sql<{ n: number }[]>`
      select count(*)::int as n from portal_sessions where merchant_id = ${m.id} and affiliate_id = ${a.id}`;
  t.equal(left!.n, 0, 'no session row is left');
  t.equal((await m.client.patch(`/api/v1/affiliates/${a.id}`, { status: 'approved' })).status, 200);

  t.equal((await portal(base, s, 'GET', '/portal/api/session')).status, 401, 'the old cookie stays signed out');
  t.equal((await openLink(base, unused)).status, 410, 'the unused sign-in link is spent');
  t.equal((await openLink(base, embedLink)).status, 410, 'the unused embed link is spent');
  const again = await signIn(base, a.email);
  t.equal((await portal(base, again, 'GET', '/portal/api/session')).status, 200, 'a new sign-in works');
});

t.test('rejected: an application rejected spends the links made for it', async (t) => {
  const res = await m.client.post('/api/v1/affiliates', {
    email: `pending-${Date.now()}@example.com`,
    status: 'pending',
  });
  t.match(res, { status: 201, body: { status: 'pending' } }, 'a pending affiliate, as an application makes');
  const id = res.body.id as string;
  await platform.sql`
    insert into portal_links (token_hash, purpose, email, merchant_id, affiliate_id, expires_at)
    values (sha256('rejected-link'), 'sign_in', ${res.body.email}, ${m.id}, ${id}, now() + interval '15 minutes')`;
  t.equal((await m.client.patch(`/api/v1/affiliates/${id}`, { status: 'rejected' })).status, 200);
  const [link] = await platform.sql<{ used: boolean }[]>`
    select used_at is not null as used from portal_links where token_hash = sha256('rejected-link')`;
  t.ok(link!.used, 'spent');
});

t.test("a mailed link survives a scanner's GETs and another site's POST; the person's Continue signs in", async (t) => {
  const a = await approvedAffiliate(m);
  t.equal((await portal(base, null, 'POST', '/portal/api/sign-in', { email: a.email })).status, 202);
  const { url } = await newestPortalLink(base, a.email);
  const path = base + new URL(url).pathname;
  for (let i = 0; i < 2; i++) {
    const scanned = await fetch(path, { redirect: 'manual' });
    t.equal(scanned.status, 200, 'a GET shows the Continue page');
    t.notOk(scanned.headers.get('set-cookie'), 'and opens no session');
    t.match(await scanned.text(), /<form method="post"><button type="submit">Continue<\/button><\/form>/);
  }
  for (const headers of [{ 'sec-fetch-site': 'cross-site' }, { origin: 'https://evil.example' }, {}]) {
    const forged = await fetch(path, { method: 'POST', redirect: 'manual', headers });
    t.equal(forged.status, 200, `a POST from elsewhere (${JSON.stringify(headers)}) opens nothing`);
    t.notOk(forged.headers.get('set-cookie'));
  }
  const opened = await openLink(base, url);
  t.equal(opened.status, 303, "the person's Continue opens the session");
  t.ok(opened.cookie);
  t.equal((await openLink(base, url)).status, 410, 'once');
});

t.test('a link continued in several tabs at once opens one session', async (t) => {
  const a = await approvedAffiliate(m);
  t.equal((await portal(base, null, 'POST', '/portal/api/sign-in', { email: a.email })).status, 202);
  const { url } = await newestPortalLink(base, a.email);
  const path = base + new URL(url).pathname;
  const tabs = await Promise.all(
    Array.from({ length: 5 }, () =>
      fetch(path, { method: 'POST', redirect: 'manual', headers: { 'sec-fetch-site': 'same-origin' } }),
    ),
  );
  t.same(tabs.map((r) => r.status).sort(), [303, 410, 410, 410, 410], 'one opens it; the others find it used');
  const [sessions] = await platform.sql<{ n: number }[]>`
    select count(*)::int as n from portal_sessions where merchant_id = ${m.id} and affiliate_id = ${a.id}`;
  t.equal(sessions!.n, 1, 'one session');
});
