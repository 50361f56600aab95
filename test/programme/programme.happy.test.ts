import t from 'tap';
import { eventually } from '../helpers/platform.ts';
import {
  affiliateWebhooks,
  application,
  apply,
  mailsTo,
  programmeMerchant,
  startProgrammePlatform,
} from './programme.ts';

// The programme page and its applications (docs/PORTAL.md): the page shows the programme and its computed terms,
// an application makes a pending affiliate (affiliate.created) or, with auto-approve, an approved one
// (affiliate.created then affiliate.approved) with a portal sign-in link by mail; a recruit link makes the recruiter
// the parent; approving or rejecting by PATCH mails the applicant.
const platform = await startProgrammePlatform(t);

const affiliateByEmail = async (merchantId: string, email: string) =>
  (
    await platform.sql`select id, status, parent_id, display_name, slug from affiliates
    where merchant_id = ${merchantId} and email = ${email}`
  )[0];

t.test('the page shows the programme, its terms from the real rates, and the form', async (t) => {
  const m = await programmeMerchant(platform, { slug: 'acme-page', description: 'Gear for hikers.' }, 'Acme Page');
  await m.dash('PATCH', '/dashboard/api/settings', {
    default_rate: 0.15,
    level_rates: [0.1],
    commission_rules: { signup: { kind: 'flat', amount: '5' } },
  });
  const res = await fetch(`${platform.baseUrl}/p/acme-page`);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-security-policy'), /default-src 'none'/);
  const html = await res.text();
  t.match(html, /Acme Page affiliate programme/);
  t.match(html, /Gear for hikers\./);
  t.match(html, /5 USD for each signup/);
  t.match(html, /15% of the amount of every other sale/);
  t.match(html, /10% of the commissions of the affiliates you recruit/);
  for (const label of ['Name', 'E-mail', 'Website', 'How will you promote us?'])
    t.match(html, new RegExp(`<label for="\\w+">${label.replace('?', '\\?')}</label>`), label);
  t.match(html, /type="checkbox" id="terms"/);
  t.match(html, /<button type="submit">Apply<\/button>/);
  const page = await m.dash('GET', '/dashboard/api/programme');
  t.match(page.body.commission_terms, ['5 USD for each signup', /15%/, /10%/]);
  t.equal(page.body.page_url, `${platform.env['PUBLIC_BASE_URL'] ?? 'http://localhost:8080'}/p/acme-page`);
});

t.test('an application makes a pending affiliate, its application, a webhook and a mail', async (t) => {
  const m = await programmeMerchant(platform, { slug: 'acme-pending' }, 'Acme Pending');
  const hooks = await affiliateWebhooks(t, platform, m.id);
  const res = await apply(platform, 'acme-pending', application('jane@applicant.example'));
  t.equal(res.status, 200);
  t.match(res.text, /Thank you for applying/);
  const affiliate = await affiliateByEmail(m.id, 'jane@applicant.example');
  t.match(affiliate, { status: 'pending', parent_id: null, display_name: 'Jane Applicant' });
  const [stored] = await platform.sql`select website, promotion, terms_accepted_at from affiliate_applications
    where merchant_id = ${m.id} and affiliate_id = ${affiliate!['id']}`;
  t.match(stored, { website: 'https://jane.example.com/', promotion: 'A weekly newsletter about hiking' });
  t.ok(stored!['terms_accepted_at'] instanceof Date);
  const created = await eventually(async () => hooks.received.find((h) => h.type === 'affiliate.created'));
  t.match(JSON.parse(created.body).data, { id: affiliate!['id'], status: 'pending' });
  const [mail] = await mailsTo(platform, 'jane@applicant.example');
  t.match(mail, { subject: /received your application to Acme Pending/ });
  t.same(mail!.links, [], 'no link before approval');

  const listed = await m.dash('GET', '/dashboard/api/applications');
  t.match(listed.body.data, [{ affiliate_id: affiliate!['id'], website: 'https://jane.example.com/' }]);

  // Approved with the public API: affiliate.approved, and a mail with a portal sign-in link.
  const approved = await m.client.patch(`/api/v1/affiliates/${affiliate!['id']}`, { status: 'approved' });
  t.equal(approved.status, 200);
  await eventually(async () => hooks.received.find((h) => h.type === 'affiliate.approved'));
  const mails = await mailsTo(platform, 'jane@applicant.example', 2);
  t.match(mails[0], { subject: /Welcome to the Acme Pending affiliate programme/ });
  t.match(mails[0]!.links[0], /\/portal\/link\/[A-Za-z0-9_-]{43}$/);
  const [link] = await platform.sql`select purpose, affiliate_id, used_at from portal_links
    where merchant_id = ${m.id}`;
  t.match(link, { purpose: 'sign_in', affiliate_id: affiliate!['id'], used_at: null });
  t.same((await m.dash('GET', '/dashboard/api/applications')).body.data, [], 'no longer waiting');
});

t.test('with auto-approve, the affiliate is approved at once and mailed its sign-in link', async (t) => {
  const m = await programmeMerchant(platform, { slug: 'acme-auto', auto_approve: true }, 'Acme Auto');
  const hooks = await affiliateWebhooks(t, platform, m.id);
  t.equal((await apply(platform, 'acme-auto', application('auto@applicant.example'))).status, 200);
  t.match(await affiliateByEmail(m.id, 'auto@applicant.example'), { status: 'approved' });
  await eventually(async () => (hooks.received.length >= 2 ? true : undefined));
  t.same(hooks.received.map((h) => h.type).sort(), ['affiliate.approved', 'affiliate.created'], 'both delivered');
  const events = await platform.sql`select type, data->>'status' as status from outbox
    where merchant_id = ${m.id} order by seq`;
  t.same(
    events.map((e) => [e['type'], e['status']]),
    [
      ['affiliate.created', 'approved'],
      ['affiliate.approved', 'approved'],
    ],
    'created, then approved, in one transaction',
  );
  const [mail] = await mailsTo(platform, 'auto@applicant.example');
  t.match(mail, { subject: /Welcome to the Acme Auto/, links: [/\/portal\/link\//] });
});

t.test('a recruit link makes its approved affiliate the parent; any other ref is ignored', async (t) => {
  const m = await programmeMerchant(platform, { slug: 'acme-recruit' });
  const lead = await m.client.post('/api/v1/affiliates', { email: 'lead@recruit.example', slug: 'the-lead' });
  const idle = await m.client.post('/api/v1/affiliates', {
    email: 'idle@recruit.example',
    slug: 'the-idle',
    status: 'pending',
  });
  const page = await (await fetch(`${platform.baseUrl}/p/acme-recruit?ref=the-lead`)).text();
  t.match(page, /<input type="hidden" name="ref" value="the-lead">/);
  await apply(platform, 'acme-recruit', application('child@recruit.example', { ref: 'the-lead' }));
  t.match(await affiliateByEmail(m.id, 'child@recruit.example'), { parent_id: lead.body.id });
  await apply(platform, 'acme-recruit', application('orphan@recruit.example', { ref: 'the-idle' }));
  t.match(await affiliateByEmail(m.id, 'orphan@recruit.example'), { parent_id: null }, 'a pending recruiter');
  t.ok(idle.body.id);
  await apply(platform, 'acme-recruit', application('stray@recruit.example', { ref: 'nobody-here' }));
  t.match(await affiliateByEmail(m.id, 'stray@recruit.example'), { status: 'pending', parent_id: null });
});

t.test('rejecting an application mails a polite note and no webhook; a rejected affiliate is final', async (t) => {
  const m = await programmeMerchant(platform, { slug: 'acme-reject' }, 'Acme Reject');
  await apply(platform, 'acme-reject', application('no@applicant.example'));
  const affiliate = await affiliateByEmail(m.id, 'no@applicant.example');
  const rejected = await m.client.patch(`/api/v1/affiliates/${affiliate!['id']}`, { status: 'rejected' });
  t.equal(rejected.status, 200);
  t.equal(rejected.body.status, 'rejected');
  const mails = await mailsTo(platform, 'no@applicant.example', 2);
  t.match(mails[0], { subject: /Your application to Acme Reject/, text: /not able to accept/ });
  const again = await m.client.patch(`/api/v1/affiliates/${affiliate!['id']}`, { status: 'approved' });
  t.equal(again.status, 409);
  t.match(again.body.error.message, /rejected is final/);
  const events = await platform.sql`select type from outbox where merchant_id = ${m.id} order by seq`;
  t.same(
    events.map((e) => e['type']),
    ['affiliate.created'],
    'no affiliate.rejected: not among the twelve events',
  );
  const link = await fetch(`${platform.baseUrl}/r/${m.id}/${affiliate!['slug']}`, { redirect: 'manual' });
  t.not(link.status, 302, 'a rejected affiliate’s link does not track');
});
