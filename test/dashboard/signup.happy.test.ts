import { createHash } from 'node:crypto';
import t from 'tap';
import { sessionRequest, signInHttp, startDashboardPlatform } from '../helpers/dashboard.ts';
import { mailsTo, signUpBody, signUpHttp, tokenOf, verifyHttp } from '../helpers/signup.ts';
import { linksOf, startSmtpServer } from '../helpers/smtp.ts';

// Sign-up over HTTP with real mail: the merchant on the Free plan and its owner, a verification mail through a real
// SMTP server, the owner signed in but unable to change anything until the link is followed, then verified and
// signed in by the link.
const smtp = await startSmtpServer(t);
const { platform } = await startDashboardPlatform(t, { services: ['dispatcher'], env: { SMTP_URL: smtp.url } });
const base = platform.baseUrl;

t.test('sign-up makes a Free merchant and its owner, and mails a verification link once', async (t) => {
  const email = 'founder@acme.example';
  const res = await signUpHttp(base, signUpBody(email, { company_name: '  Acme Outdoor ' }));
  t.equal(res.status, 200);
  t.same(res.body, { email, status: 'verification_sent' });
  t.equal(res.headers.get('cache-control'), 'no-store');

  const [merchant] = await platform.sql`
    select m.id, m.name, m.plan, u.email_verified_at from merchants m
    join dashboard_users u on u.merchant_id = m.id where u.email = ${email}`;
  t.match(merchant, { name: 'Acme Outdoor', plan: 'free', email_verified_at: null });

  await smtp.waitFor(1);
  await new Promise((r) => setTimeout(r, 1500));
  const mails = mailsTo(smtp.received, email);
  t.equal(mails.length, 1, 'one mail');
  t.match(mails[0]!.raw, /^Subject: Verify your e-mail address/m);
  t.match(mails[0]!.raw, /Content-Type: text\/plain/);
  t.match(mails[0]!.raw, /Content-Type: text\/html/);
  const token = tokenOf(mails[0]!);
  t.match(token, /^[A-Za-z0-9_-]{43}$/);
  t.same(linksOf(mails[0]!.raw), [`http://localhost:8080/dashboard/verify?token=${token}`], 'on PUBLIC_BASE_URL');
  const [stored] = await platform.sql`
    select token_hash, expires_at - created_at as ttl, used_at from email_verifications where merchant_id = ${merchant!['id']}`;
  t.same(stored!['token_hash'], createHash('sha256').update(token!).digest(), 'stored as its hash');
  t.equal(stored!['used_at'], null);
});

t.test(
  'until verified the owner signs in and reads, but changes nothing; the link verifies and signs in',
  async (t) => {
    const email = 'second@acme.example';
    await signUpHttp(base, signUpBody(email));
    const before = await signInHttp(base, email, 'a long enough password');
    t.equal(before.status, 201, 'signs in before verifying');
    t.equal((await sessionRequest(base, before, 'GET', '/dashboard/api/settings')).status, 200, 'reads');
    for (const [method, path, body] of [
      ['POST', '/api/v1/affiliates', { email: 'jane@example.com' }],
      ['PATCH', '/dashboard/api/settings', { cookie_days: 45 }],
    ] as const) {
      const refused = await sessionRequest(base, before, method, path, body);
      t.equal(refused.status, 403, `${method} ${path}`);
      t.match(refused.body, { error: { code: 'FORBIDDEN', message: /^Verify your e-mail address first/ } });
    }

    const [mail] = await (async () => {
      for (let i = 0; i < 200 && mailsTo(smtp.received, email).length === 0; i++)
        await new Promise((r) => setTimeout(r, 50));
      return mailsTo(smtp.received, email);
    })();
    const verified = await verifyHttp(base, tokenOf(mail!)!);
    t.equal(verified.status, 204);
    t.match(verified.cookie, /^[A-Za-z0-9_-]{43}$/, 'the link signs in');
    const session = await sessionRequest(base, { cookie: verified.cookie }, 'GET', '/dashboard/api/session');
    t.match(session.body, { session: { user: { email }, merchant: { plan: 'free' } } });
    const created = await sessionRequest(base, before, 'POST', '/api/v1/affiliates', { email: 'jane@example.com' });
    t.equal(created.status, 201, 'the session opened before verifying may now change things too');
    const out = await sessionRequest(base, before, 'DELETE', '/dashboard/api/session');
    t.equal(out.status, 204);
  },
);

t.test('an unverified owner can still sign out', async (t) => {
  const email = 'leaving@acme.example';
  await signUpHttp(base, signUpBody(email));
  const session = await signInHttp(base, email, 'a long enough password');
  const out = await sessionRequest(base, session, 'DELETE', '/dashboard/api/session');
  t.equal(out.status, 204);
});
