import t from 'tap';
import {
  dashboardMerchant,
  PASSWORD,
  sessionRequest,
  signInHttp,
  startDashboardPlatform,
} from '../helpers/dashboard.ts';

// Password guessing at the dashboard: attempts are reserved before any password is checked, so parallel guesses are
// bounded by the limit, not by how many arrive at once; the owner still signs in from another address. The gateway
// trusts one proxy hop here (TRUST_PROXY=1), so X-Forwarded-For's last address is the client's.
const { platform } = await startDashboardPlatform(t, { env: { TRUST_PROXY: '1' } });
const base = platform.baseUrl;
const from = (ip: string) => ({ 'x-forwarded-for': ip });

/** Passwords checked with scrypt so far, from the gateway's own counter. */
async function verifications(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${platform.gateways[0]!.opsPort}/metrics`)).text();
  let total = 0;
  for (const m of text.matchAll(/^dashboard_password_verifications_total\{[^}]*\} (\d+)$/gm)) total += Number(m[1]);
  return total;
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

t.test('40 wrong passwords at once: at most 5 are checked, and the owner still signs in from elsewhere', async (t) => {
  const m = await dashboardMerchant(platform);
  const before = await verifications();
  const attacker = '198.51.100.7';
  const statuses = await Promise.all(
    Array.from({ length: 40 }, (_, i) => signInHttp(base, m.email, `guess ${i}`, from(attacker)).then((r) => r.status)),
  );
  t.equal(count(statuses, 401), 5, 'five guesses were answered');
  t.equal(count(statuses, 429), 35, 'the rest were refused without a check');
  t.equal((await verifications()) - before, 5, 'scrypt ran five times');

  const refused = await signInHttp(base, m.email, PASSWORD, from(attacker));
  t.equal(refused.status, 429, 'from the guessing address, even the right password waits');
  t.ok(Number(refused.headers.get('retry-after')) > 800);
  const owner = await signInHttp(base, m.email, PASSWORD, from('203.0.113.20'));
  t.equal(owner.status, 201, 'the owner signs in from their own address');
  t.ok(owner.cookie);
});

t.test('guesses from many addresses are bounded per account (20 in the window)', async (t) => {
  const m = await dashboardMerchant(platform);
  const before = await verifications();
  const statuses: number[] = [];
  // Five at once from each of twelve addresses: each address is within its own limit, the account is not.
  for (let a = 0; a < 12; a++) {
    const batch = Array.from({ length: 5 }, (_, i) =>
      signInHttp(base, m.email, `guess ${a}.${i}`, from(`192.0.2.${a}`)),
    );
    statuses.push(...(await Promise.all(batch)).map((r) => r.status));
  }
  t.equal(count(statuses, 401), 20, 'twenty guesses were answered');
  t.equal(count(statuses, 429), 40);
  t.equal((await verifications()) - before, 20, 'scrypt ran twenty times');
  const owner = await signInHttp(base, m.email, PASSWORD, from('203.0.113.21'));
  t.equal(owner.status, 429, 'the account is closed for the rest of the window, from anywhere');
  await platform.sql`update dashboard_signin_failures set window_start = now() - interval '16 minutes'
    where subject like ${`%${m.email}%`}`;
  t.equal((await signInHttp(base, m.email, PASSWORD, from('203.0.113.21'))).status, 201, 'then opens again');
});

t.test('a right password is not counted, and forgives its own address’s typos', async (t) => {
  const m = await dashboardMerchant(platform);
  const ip = '203.0.113.30';
  for (let i = 0; i < 4; i++) t.equal((await signInHttp(base, m.email, `typo ${i}`, from(ip))).status, 401);
  t.equal((await signInHttp(base, m.email, PASSWORD, from(ip))).status, 201);
  const rows = await platform.sql<{ subject: string; count: number }[]>`
    select subject, count from dashboard_signin_failures where subject like ${`%${m.email}%`} order by subject`;
  t.same(
    rows.map((r) => [r.subject, r.count]),
    [[`account:${m.email}`, 4]],
    'the typos still count for the account, not for the address, and the sign-ins not at all',
  );
  for (let i = 0; i < 5; i++) t.equal((await signInHttp(base, m.email, `again ${i}`, from(ip))).status, 401);
  t.equal((await signInHttp(base, m.email, PASSWORD, from(ip))).status, 429, 'five new typos close the address');
});

t.test('reveal-secret: 40 wrong passwords at once check at most 5, and the session’s owner gets through', async (t) => {
  const m = await dashboardMerchant(platform);
  const signed = await signInHttp(base, m.email, PASSWORD, from('203.0.113.40'));
  const before = await verifications();
  const reveal = (password: string, ip: string) =>
    fetch(`${base}/dashboard/api/webhook_endpoints/we_nope/reveal_secret`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        cookie: `dash_session=${signed.cookie}`,
        'x-csrf-token': signed.csrf!,
        ...from(ip),
      },
      body: JSON.stringify({ password }),
    });
  const responses = await Promise.all(Array.from({ length: 40 }, (_, i) => reveal(`guess ${i}`, '198.51.100.8')));
  const statuses = responses.map((r) => r.status);
  t.equal(count(statuses, 403), 5, 'five wrong passwords were answered');
  t.equal(count(statuses, 429), 35, 'the rest were refused without a check');
  const refusal = (await responses.find((r) => r.status === 429)!.json()) as { error: { code: string } };
  t.equal(refusal.error.code, 'RATE_LIMITED');
  t.equal((await verifications()) - before, 5, 'scrypt ran five times');
  t.equal((await reveal(PASSWORD, '198.51.100.8')).status, 429, 'the guessing address waits');
  const owner = await reveal(PASSWORD, '203.0.113.40');
  t.equal(owner.status, 404, 'from the owner’s address the password passes (and the unknown endpoint is 404)');
});

t.test('with one trusted hop, a spoofed leftmost X-Forwarded-For does not change the per-IP key', async (t) => {
  const m = await dashboardMerchant(platform);
  for (let i = 0; i < 3; i++) {
    const res = await signInHttp(base, m.email, 'wrong', from(`10.66.0.${i}, 203.0.113.50`));
    t.equal(res.status, 401);
  }
  const rows = await platform.sql<{ subject: string; count: number }[]>`
    select subject, count from dashboard_signin_failures where subject like '%10.66.0.%' or subject like '%203.0.113.50'
    order by subject`;
  t.same(
    rows.map((r) => [r.subject, r.count]),
    [
      [`account+ip:${m.email} 203.0.113.50`, 3],
      ['ip:203.0.113.50', 3],
    ],
    'every attempt counted against the address the proxy saw',
  );
  const ok = await sessionRequest(base, await signInHttp(base, m.email), 'GET', '/dashboard/api/session');
  t.equal(ok.status, 200);
});
