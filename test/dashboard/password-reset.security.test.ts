import { createHash } from 'node:crypto';
import t from 'tap';
import { createDashboardUser, sessionRequest, signInHttp, startDashboardPlatform } from '../helpers/dashboard.ts';
import { mailsTo } from '../helpers/signup.ts';
import { linksOf, startSmtpServer, type ReceivedMail } from '../helpers/smtp.ts';
import { eventually } from '../helpers/platform.ts';

/**
 * "Forgot password?" over HTTP with real mail: the answer never says whether an address has an account; the link is
 * stored hashed, works once and for half an hour, ends every session of the user (and the user's other links), and
 * signs them in; asking is limited per account.
 */
const smtp = await startSmtpServer(t);
const { platform } = await startDashboardPlatform(t, { services: ['dispatcher'], env: { SMTP_URL: smtp.url } });
const base = platform.baseUrl;
const NEW = 'a fresh new password';

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text ? JSON.parse(text) : undefined,
    cookie: /dash_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1],
  };
};
const resetTokenOf = (mail: ReceivedMail) => {
  const link = linksOf(mail.raw).find((l) => l.includes('/dashboard/reset?token='));
  return link ? new URL(link).searchParams.get('token')! : undefined;
};
async function user() {
  const merchant = await platform.merchant({ plan: 'growth' });
  const email = `user-${merchant.id}@example.com`;
  await createDashboardUser(platform.sql, merchant.id, email);
  return { merchant, email };
}
const mailOf = (email: string, n = 1) =>
  eventually(async () => {
    const mails = mailsTo(smtp.received, email);
    return mails.length >= n ? mails[n - 1] : undefined;
  }, 15_000);

t.test('the link resets the password once, ends every session, and signs in', async (t) => {
  const { email } = await user();
  const open = await signInHttp(base, email);
  const asked = await post('/dashboard/api/password_reset', { email: email.toUpperCase() });
  t.equal(asked.status, 200);
  t.same(asked.body, { status: 'reset_sent' });
  const mail = await mailOf(email);
  t.match(mail.raw, /^Subject: Reset your password/m);
  const token = resetTokenOf(mail)!;
  t.match(token, /^[A-Za-z0-9_-]{43}$/);
  const [stored] = await platform.sql`select token_hash, expires_at - created_at as ttl from password_resets`;
  t.same(stored!['token_hash'], createHash('sha256').update(token).digest(), 'stored as its hash');

  const reset = await post('/dashboard/api/password_reset/confirm', { token, password: NEW });
  t.equal(reset.status, 204);
  t.ok(reset.cookie, 'signed in');
  const session = await sessionRequest(base, { cookie: reset.cookie }, 'GET', '/dashboard/api/session');
  t.equal(session.body.session.user.email, email);
  t.same(
    (await sessionRequest(base, open, 'GET', '/dashboard/api/session')).body,
    { session: null },
    'the session open before has ended',
  );
  t.equal((await signInHttp(base, email)).status, 401, 'the old password no longer signs in');
  t.equal((await signInHttp(base, email, NEW)).status, 201, 'the new one does');
  const again = await post('/dashboard/api/password_reset/confirm', { token, password: 'yet another password' });
  t.equal(again.status, 400, 'the link works once');
  t.match(again.body.error, { code: 'INVALID_INPUT', details: [{ path: 'token' }] });
});

t.test('an address without an account gets the same answer and no mail', async (t) => {
  const before = smtp.received.length;
  const res = await post('/dashboard/api/password_reset', { email: 'nobody@nowhere.example' });
  t.equal(res.status, 200);
  t.same(res.body, { status: 'reset_sent' });
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(mailsTo(smtp.received, 'nobody@nowhere.example').length, 0);
  t.ok(smtp.received.length >= before);
});

t.test('a newer reset ends the older link; an expired link is refused; two uses at once: one wins', async (t) => {
  const { email } = await user();
  await post('/dashboard/api/password_reset', { email });
  await post('/dashboard/api/password_reset', { email });
  const first = resetTokenOf(await mailOf(email, 1))!;
  const second = resetTokenOf(await mailOf(email, 2))!;
  const answers = await Promise.all([
    post('/dashboard/api/password_reset/confirm', { token: second, password: `${NEW} a` }),
    post('/dashboard/api/password_reset/confirm', { token: second, password: `${NEW} b` }),
  ]);
  t.same(answers.map((a) => a.status).sort(), [204, 400], 'the same link used twice at once: once');
  t.equal(
    (await post('/dashboard/api/password_reset/confirm', { token: first, password: NEW })).status,
    400,
    'using one link ended the user’s other links',
  );

  const other = await user();
  await post('/dashboard/api/password_reset', { email: other.email });
  const stale = resetTokenOf(await mailOf(other.email))!;
  await platform.sql`
    update password_resets set expires_at = now() - interval '1 second'
    where token_hash = ${createHash('sha256').update(stale).digest()}`;
  t.equal((await post('/dashboard/api/password_reset/confirm', { token: stale, password: NEW })).status, 400);
  t.equal((await signInHttp(base, other.email)).status, 201, 'the password is unchanged');
});

t.test('bad input is 400; asking is limited per account', async (t) => {
  t.equal((await post('/dashboard/api/password_reset/confirm', { token: 'x', password: 'short' })).status, 400);
  t.equal((await post('/dashboard/api/password_reset', {})).status, 400);
  const { email } = await user();
  for (let i = 0; i < 5; i++) t.equal((await post('/dashboard/api/password_reset', { email })).status, 200);
  const limited = await post('/dashboard/api/password_reset', { email });
  t.equal(limited.status, 429);
  t.ok(Number(limited.headers.get('retry-after')) > 0);
});
