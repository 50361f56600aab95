import { createHash } from 'node:crypto';
import t from 'tap';
import { dashboardMerchant, sessionRequest, signInHttp, startDashboardPlatform } from '../helpers/dashboard.ts';
import { acceptHttp, invitationToken, invite, waitForMails } from '../helpers/invitations.ts';

/**
 * Settings → Team, invitations: an owner invites an address with a role, the mail carries a link on PUBLIC_BASE_URL,
 * and accepting it makes the member with that role and address (verified) and signs them in. Resending mails a new
 * link and kills the old one; revoking kills it too; an owner hands over ownership and becomes admin. Every step is
 * in the audit log.
 */
const { platform } = await startDashboardPlatform(t, { services: ['dispatcher'] });
const base = platform.baseUrl;
const merchant = await dashboardMerchant(platform);
const owner = await signInHttp(base, merchant.email);
const as = (method: string, path: string, body?: unknown) => sessionRequest(base, owner, method, path, body);

const auditActions = async () =>
  ((await as('GET', '/dashboard/api/audit')).body.data as { action: string; actor: string; detail: any }[]).map(
    (e) => ({ action: e.action, actor: e.actor, email: e.detail.email, role: e.detail.role }),
  );

t.test('invite → mail → accept: a verified member with the role, signed in', async (t) => {
  const email = `Viewer-${merchant.id}@example.com`;
  const created = await as('POST', '/dashboard/api/invitations', { email, role: 'viewer' });
  t.equal(created.status, 201);
  t.match(created.body, { id: /^inv_/, email, role: 'viewer', invited_by: merchant.email, expired: false });
  const ttl = Date.parse(created.body.expires_at) - Date.parse(created.body.sent_at);
  t.ok(Math.abs(ttl - 7 * 86_400_000) < 5_000, 'the link lives 7 days');
  const listed = await as('GET', '/dashboard/api/invitations');
  t.same(
    listed.body.data.map((i: { id: string }) => i.id),
    [created.body.id],
  );

  const [mail] = await waitForMails(base, email);
  t.match(mail!.subject, /invited to .*affiliate dashboard/);
  t.match(mail!.text, new RegExp(`${merchant.email} invited you`));
  const token = invitationToken(mail!);
  t.same(mail!.links, [`http://localhost:8080/dashboard/accept?token=${token}`], 'the link is on PUBLIC_BASE_URL');
  const [stored] = await platform.sql<{ token_hash: Buffer }[]>`
    select token_hash from dashboard_invitations where id = ${created.body.id as string}`;
  t.same(stored!.token_hash, createHash('sha256').update(token).digest(), 'the token is stored as its hash');

  const preview = await fetch(`${base}/dashboard/api/invitations/preview`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  t.equal(preview.status, 200);
  t.same(
    await preview.json(),
    {
      email,
      role: 'viewer',
      company: (await platform.sql`select name from merchants where id = ${merchant.id}`)[0]!['name'],
      expires_at: created.body.expires_at,
    },
    'the link shows what it is for, before the password',
  );
  const accepted = await acceptHttp(base, token, 'the viewer’s own password');
  t.equal(accepted.status, 204);
  t.match(accepted.cookie, /^[A-Za-z0-9_-]{43}$/, 'accepting signs in');
  const session = await sessionRequest(base, { cookie: accepted.cookie }, 'GET', '/dashboard/api/session');
  t.match(session.body.session, {
    user: { email, role: 'viewer', permissions: ['read'] },
    merchant: { id: merchant.id },
  });
  const [user] = await platform.sql`
    select role, email_verified_at from dashboard_users where lower(email) = lower(${email})`;
  t.equal(user!['role'], 'viewer');
  t.ok(user!['email_verified_at'], 'the address is verified: the link came to it');
  t.equal((await signInHttp(base, email, 'the viewer’s own password')).status, 201, 'signs in with the password');
  t.same((await as('GET', '/dashboard/api/invitations')).body.data, [], 'an accepted invitation is no longer open');

  const log = await auditActions();
  t.match(log.slice(0, 2), [
    { action: 'invitation.accepted', actor: email, email, role: 'viewer' },
    { action: 'invitation.created', actor: merchant.email, email, role: 'viewer' },
  ]);
});

t.test('resend mails a new link and the old one stops working; revoke kills the link', async (t) => {
  const email = `dev-${merchant.id}@example.com`;
  const first = await invite(base, owner, email, 'developer');
  const resent = await as('POST', `/dashboard/api/invitations/${first.invitation.id}/resend`);
  t.equal(resent.status, 200);
  t.equal(resent.body.id, first.invitation.id, 'the same invitation');
  const [newest] = await waitForMails(base, email, 2);
  const second = invitationToken(newest!);
  t.not(second, first.token, 'a new link');
  const old = await acceptHttp(base, first.token);
  t.equal(old.status, 400, 'the old link is dead');
  t.equal(old.body.error.code, 'INVALID_INPUT');

  const revoked = await as('DELETE', `/dashboard/api/invitations/${first.invitation.id}`);
  t.equal(revoked.status, 204);
  const dead = await acceptHttp(base, second);
  t.equal(dead.status, 400);
  t.match(dead.body.error.message, /revoked/);
  t.same((await as('GET', '/dashboard/api/invitations')).body.data, []);
  t.match((await auditActions()).slice(0, 2), [
    { action: 'invitation.revoked', email, role: 'developer' },
    { action: 'invitation.resent', email, role: 'developer' },
  ]);
});

t.test('an owner hands over ownership and becomes admin', async (t) => {
  const m = await dashboardMerchant(platform);
  const first = await signInHttp(base, m.email);
  const email = `next-owner-${m.id}@example.com`;
  const { token } = await invite(base, first, email, 'developer');
  const joined = await acceptHttp(base, token);
  const [next] = await platform.sql<{ id: string }[]>`select id from dashboard_users where lower(email) = ${email}`;

  const res = await sessionRequest(base, first, 'POST', `/dashboard/api/users/${next!.id}/transfer_ownership`);
  t.equal(res.status, 200);
  t.match(res.body, { id: next!.id, email, role: 'owner' });
  const roles = await platform.sql<{ email: string; role: string }[]>`
    select email, role from dashboard_users where merchant_id = ${m.id} order by email`;
  t.same(
    Object.fromEntries(roles.map((r) => [r.email, r.role])),
    { [email]: 'owner', [m.email]: 'admin' },
    'one owner: the new one; the old one is admin',
  );
  const mine = await sessionRequest(base, first, 'GET', '/dashboard/api/session');
  t.equal(mine.body.session.user.role, 'admin', 'at once, in the open session');
  const theirs = await sessionRequest(base, { cookie: joined.cookie }, 'GET', '/dashboard/api/session');
  t.equal(theirs.body.session.user.role, 'owner');
  const audit = await sessionRequest(base, first, 'GET', '/dashboard/api/audit');
  t.match(audit.body.data[0], {
    action: 'ownership.transferred',
    actor: m.email,
    target: next!.id,
    detail: { email, from: 'developer' },
  });
});
