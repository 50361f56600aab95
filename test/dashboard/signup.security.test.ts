import t from 'tap';
import {
  dashboardMerchant,
  PASSWORD,
  sessionRequest,
  signInHttp,
  startDashboardPlatform,
} from '../helpers/dashboard.ts';
import { mailsTo, signUpBody, signUpHttp, tokenOf, verifyHttp } from '../helpers/signup.ts';
import { linksOf, startSmtpServer } from '../helpers/smtp.ts';

// What sign-up must not give away or allow: whether an address has an account (same answer, a mail saying so), the
// existing account itself, a link built from a Host the client chose, the token at rest or in the logs, and any
// change by an owner who has not verified the address.
const smtp = await startSmtpServer(t);
const { platform, dispatcherLogs } = await startDashboardPlatform(t, {
  services: ['dispatcher'],
  env: { SMTP_URL: smtp.url, PUBLIC_BASE_URL: 'https://app.platform.example' },
});
const base = platform.baseUrl;

const waitForMail = async (to: string, n = 1) => {
  for (let i = 0; i < 300 && mailsTo(smtp.received, to).length < n; i++) await new Promise((r) => setTimeout(r, 50));
  return mailsTo(smtp.received, to);
};

t.test('an address already registered gets the same answer as a new one, and a mail saying so', async (t) => {
  const owner = await dashboardMerchant(platform, 'growth', 'taken@acme.example');
  const merchants = async () => (await platform.sql`select count(*)::int as n from merchants`)[0]!['n'] as number;
  const before = await merchants();
  const taken = await signUpHttp(base, signUpBody(owner.email.toUpperCase(), { password: 'another password!' }));
  const fresh = await signUpHttp(base, signUpBody('fresh@acme.example'));
  t.equal(taken.status, fresh.status);
  t.same(Object.keys(taken.body), Object.keys(fresh.body));
  t.equal(taken.body.status, fresh.body.status);
  t.equal(await merchants(), before + 1, 'only the new address made a merchant');

  const [mail] = await waitForMail(owner.email.toUpperCase());
  t.match(mail!.raw, /^Subject: You already have an account/m);
  t.equal(tokenOf(mail!), undefined, 'no verification link in it');
  t.equal((await signInHttp(base, owner.email)).status, 201, 'the account keeps its password');
  t.equal((await signInHttp(base, owner.email, 'another password!')).status, 401, 'and takes no other');
  const [plan] = await platform.sql`select plan from merchants where id = ${owner.id}`;
  t.equal(plan!['plan'], 'growth', 'and its merchant is untouched');
});

t.test('signing up again before verifying mails a new link; each link is for its owner only', async (t) => {
  const email = 'twice@acme.example';
  await signUpHttp(base, signUpBody(email));
  await signUpHttp(base, signUpBody(email));
  const mails = await waitForMail(email, 2);
  t.equal(mails.length, 2);
  const [first, second] = mails.map((m) => tokenOf(m)!);
  t.not(first, second);
  t.equal(
    (
      await platform.sql`select count(*)::int as n from merchants m join dashboard_users u on u.merchant_id = m.id
    where u.email = ${email}`
    )[0]!['n'],
    1,
    'one account',
  );
  const verified = await verifyHttp(base, second!);
  t.equal(verified.status, 204);
  const session = await sessionRequest(base, { cookie: verified.cookie }, 'GET', '/dashboard/api/session');
  t.equal(session.body.session.user.email, email, 'signed in as the link’s owner');
});

t.test('the links point at PUBLIC_BASE_URL whatever Host the request named', async (t) => {
  const email = 'host@acme.example';
  const res = await fetch(`${base}/dashboard/api/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', host: 'evil.example', 'x-forwarded-host': 'evil.example' },
    body: JSON.stringify(signUpBody(email)),
  });
  t.equal(res.status, 200);
  const [mail] = await waitForMail(email);
  const links = linksOf(mail!.raw);
  t.ok(links.length > 0);
  for (const link of links) t.ok(link.startsWith('https://app.platform.example/dashboard/verify?token='), link);
  t.notMatch(mail!.raw.replace(/=\r?\n/g, ''), 'evil.example');
});

t.test('neither the token nor the password is kept in clear or logged', async (t) => {
  const email = 'secret@acme.example';
  await signUpHttp(base, signUpBody(email, { password: 'my very secret password' }));
  const [mail] = await waitForMail(email);
  const token = tokenOf(mail!)!;
  await new Promise((r) => setTimeout(r, 500));
  const [row] = await platform.sql`
    select (select count(*)::int from mails where recipient = ${email} and content_encrypted is not null) as kept,
           (select password_hash from dashboard_users where email = ${email}) as hash`;
  t.equal(row!['kept'], 0, 'the sent mail keeps no content');
  t.match(row!['hash'], /^scrypt\$/);
  for (const line of [...platform.logs, ...dispatcherLogs]) {
    t.notOk(line.includes(token), 'no token in the logs');
    t.notOk(line.includes('my very secret password'), 'no password in the logs');
  }
});

t.test('an unverified owner changes nothing through any door, and reads only its own merchant', async (t) => {
  const email = 'unverified@acme.example';
  await signUpHttp(base, signUpBody(email));
  const signed = await signInHttp(base, email, 'a long enough password');
  t.equal(signed.status, 201);
  for (const [method, path, body] of [
    ['POST', '/dashboard/api/tiers', { name: 'Gold', rate: 0.2, threshold: 100 }],
    ['POST', '/dashboard/api/users', { email: 'friend@acme.example', password: PASSWORD }],
    ['POST', '/api/v1/affiliates', { email: 'a@example.com' }],
    ['POST', '/dashboard/api/keys', { scopes: ['read'] }],
  ] as const) {
    const res = await sessionRequest(base, signed, method, path, body);
    t.equal(res.status, 403, `${method} ${path}`);
    t.equal(res.body.error.code, 'FORBIDDEN');
  }
  const [counts] = await platform.sql`
    select (select count(*)::int from affiliates a join dashboard_users u on u.merchant_id = a.merchant_id
            where u.email = ${email}) as affiliates,
           (select count(*)::int from dashboard_users where email = 'friend@acme.example') as users`;
  t.same({ ...counts }, { affiliates: 0, users: 0 });
  const list = await sessionRequest(base, signed, 'GET', '/api/v1/affiliates');
  t.equal(list.status, 200);
  t.same(list.body.data, [], 'its own, empty merchant');
});
