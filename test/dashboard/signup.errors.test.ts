import t from 'tap';
import { insertVerification } from '@platform/gateway/surfaces/dashboard/queries/signup';
import { hashToken } from '@platform/gateway/http/accounts/tokens';
import { startDashboardPlatform } from '../helpers/dashboard.ts';
import { signUpBody, signUpHttp, verifyHttp } from '../helpers/signup.ts';

// Sign-up's refusals, in the error envelope: bad input (no account, no mail), links that are unknown, used or over a
// day old, and the abuse limits per client address and per e-mail domain. The gateway trusts X-Forwarded-For from
// loopback here, so that one test process can be many client addresses.
const { platform } = await startDashboardPlatform(t, { env: { TRUST_PROXY: 'loopback' } });
const base = platform.baseUrl;
let nextIp = 1;
const freshIp = () => ({ 'x-forwarded-for': `198.51.100.${nextIp++}` });
const counts = async () =>
  (
    await platform.sql`select (select count(*)::int from merchants) as merchants, (select count(*)::int from mails) as mails`
  )[0]!;

t.test('bad input is refused per field, and makes neither an account nor a mail', async (t) => {
  const before = await counts();
  for (const [over, path] of [
    [{ company_name: '' }, 'company_name'],
    [{ company_name: '   ' }, 'company_name'],
    [{ email: 'not-an-address' }, 'email'],
    [{ password: 'short' }, 'password'],
    [{ plan: 'scale' }, 'plan'], // a sign-up does not choose its plan
  ] as const) {
    const res = await signUpHttp(base, signUpBody('bad@input.example', over), freshIp());
    t.equal(res.status, 400, JSON.stringify(over));
    t.match(res.body, { error: { code: 'INVALID_INPUT', details: [{ path: new RegExp(path) }] } });
  }
  const missing = await signUpHttp(base, { email: 'x@input.example' }, freshIp());
  t.equal(missing.status, 400);
  t.same(await counts(), before);
});

t.test('a verification link that is unknown, malformed, used or over a day old is refused', async (t) => {
  const malformed = await verifyHttp(base, 'nope');
  t.equal(malformed.status, 400);
  t.match(malformed.body, { error: { code: 'INVALID_INPUT' } });
  const unknown = await verifyHttp(base, 'A'.repeat(43));
  t.equal(unknown.status, 400);
  t.match(unknown.body, {
    error: { code: 'INVALID_INPUT', message: /not valid any more/, details: [{ path: 'token' }] },
  });
  t.equal(unknown.cookie, undefined, 'no session');

  // Links stored as the sign-up stores them, with tokens of the test's own.
  await signUpHttp(base, signUpBody('late@links.example'), freshIp());
  const [user] = await platform.sql`select id, merchant_id from dashboard_users where email = 'late@links.example'`;
  const used = 'U'.repeat(43);
  const old = 'O'.repeat(43);
  for (const token of [used, old])
    await insertVerification(platform.sql, {
      tokenHash: hashToken(token),
      userId: user!['id'],
      merchantId: user!['merchant_id'],
    });
  await platform.sql`update email_verifications set expires_at = now() - interval '1 second'
    where token_hash = ${hashToken(old)}`;
  t.equal((await verifyHttp(base, used)).status, 204, 'first use');
  const again = await verifyHttp(base, used);
  t.equal(again.status, 400, 'single use');
  t.equal(again.cookie, undefined);
  const expired = await verifyHttp(base, old);
  t.equal(expired.status, 400, 'past its 24 hours');
});

t.test('one client address may sign up 10 times an hour; the 11th is told when to come back', async (t) => {
  const ip = { 'x-forwarded-for': '203.0.113.7' };
  for (let i = 0; i < 10; i++) {
    const res = await signUpHttp(base, signUpBody(`ip${i}@domain-${i}.example`), ip);
    t.equal(res.status, 200, `sign-up ${i + 1}`);
  }
  const before = await counts();
  const refused = await signUpHttp(base, signUpBody('ip10@domain-10.example'), ip);
  t.equal(refused.status, 429);
  t.match(refused.body, { error: { code: 'RATE_LIMITED' } });
  t.ok(Number(refused.headers.get('retry-after')) > 3000, 'Retry-After: most of the hour');
  t.same(await counts(), before, 'no account, no mail');
  const elsewhere = await signUpHttp(base, signUpBody('ip10@domain-10.example'), freshIp());
  t.equal(elsewhere.status, 200, 'another address is not held up');
});

t.test('one e-mail domain may be signed up 30 times an hour, from any number of addresses', async (t) => {
  for (let i = 0; i < 30; i++) {
    const res = await signUpHttp(base, signUpBody(`user${i}@ONE-DOMAIN.example`), freshIp());
    t.equal(res.status, 200, `sign-up ${i + 1}`);
  }
  const refused = await signUpHttp(base, signUpBody('user30@one-domain.example'), freshIp());
  t.equal(refused.status, 429, 'the domain is counted in any case');
  t.match(refused.body, { error: { code: 'RATE_LIMITED' } });
  const other = await signUpHttp(base, signUpBody('user30@other-domain.example'), freshIp());
  t.equal(other.status, 200);
});
