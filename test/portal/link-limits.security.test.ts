import t from 'tap';
import { PORTAL_LINK_LIMITS } from '@platform/gateway/surfaces/portal/limits';
import { startPlatform } from '../helpers/platform.ts';
import { approvedAffiliate, portal } from './backend.ts';

// Sign-in links cannot be used to lock an affiliate out: anyone may ask for anyone's link, so the tight limit is per
// address from one client IP, and a stranger uses up only their own share; a higher ceiling per address from
// anywhere still bounds the mails many IPs together can make the platform send to one address. The gateway trusts
// X-Forwarded-For from loopback so that this one process can be many clients.
const platform = await startPlatform(t, {
  env: { LOG_LEVEL: 'info', PUBLIC_BASE_URL: 'https://portal.test', TRUST_PROXY: 'loopback' },
});
const base = platform.baseUrl;
const m = await platform.merchant();
const ask = (email: string, ip: string) =>
  portal(base, null, 'POST', '/portal/api/sign-in', { email }, { headers: { 'x-forwarded-for': ip } });
const linksTo = async (email: string) =>
  (
    await platform.sql`select count(*)::int as n from mails where recipient = ${email} and kind = 'affiliate_sign_in'`
  )[0]!['n'] as number;

t.test("a stranger's requests for a victim's link do not keep the victim from getting one", async (t) => {
  const victim = await approvedAffiliate(m);
  const stranger = '203.0.113.10';
  for (let i = 0; i < PORTAL_LINK_LIMITS.perAddressAndIp; i++) t.equal((await ask(victim.email, stranger)).status, 202);
  const refused = await ask(victim.email.toUpperCase(), stranger);
  t.equal(refused.status, 429, "the stranger's share is used up");
  t.equal(refused.body.error.code, 'RATE_LIMITED');
  t.ok(Number(refused.headers.get('retry-after')) > 0);
  const before = await linksTo(victim.email);
  t.equal((await ask(victim.email, '198.51.100.20')).status, 202, 'the victim, from their own IP, is answered');
  t.equal(await linksTo(victim.email), before + 1, 'and gets a link');
});

t.test('many IPs together reach the per-address ceiling; the mails to one address stay bounded', async (t) => {
  const target = await approvedAffiliate(m);
  const clients = Math.ceil(PORTAL_LINK_LIMITS.perAddress / PORTAL_LINK_LIMITS.perAddressAndIp) + 2;
  const statuses: number[] = [];
  for (let c = 0; c < clients; c++)
    for (let i = 0; i < PORTAL_LINK_LIMITS.perAddressAndIp; i++)
      statuses.push((await ask(target.email, `192.0.2.${c + 1}`)).status);
  t.equal(statuses.filter((s) => s === 202).length, PORTAL_LINK_LIMITS.perAddress, 'accepted up to the ceiling');
  t.ok(
    statuses.slice(PORTAL_LINK_LIMITS.perAddress).every((s) => s === 429),
    'every request past the ceiling refused',
  );
  t.equal(await linksTo(target.email), PORTAL_LINK_LIMITS.perAddress, 'one mail per accepted request, no more');
  t.equal((await ask('someone.else@example.com', '192.0.2.1')).status, 202, 'other addresses from those IPs go on');
});

t.test("another client's requests for an unknown address are limited alike: the limit tells nothing", async (t) => {
  const unknown = 'nobody-here@example.com';
  for (let i = 0; i < PORTAL_LINK_LIMITS.perAddressAndIp; i++)
    t.equal((await ask(unknown, '203.0.113.30')).status, 202);
  t.equal((await ask(unknown, '203.0.113.30')).status, 429);
  t.equal((await ask(unknown, '203.0.113.31')).status, 202, 'from another client');
});
