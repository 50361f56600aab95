import t, { type Test } from 'tap';
import {
  createDashboardUser,
  dashboardMerchant,
  sessionRequest,
  signInHttp,
  startDashboardPlatform,
} from '../helpers/dashboard.ts';
import { acceptHttp, invite } from '../helpers/invitations.ts';

/**
 * Invitations and the ownership transfer refused: dead links (used, revoked, expired, unknown) in words, an address
 * that already has an account, a member or an open invitation invited again, the owner role given by a non-owner,
 * too many invitation mails in an hour, and ownership handed over by anyone but an owner.
 */
const { platform } = await startDashboardPlatform(t, { services: ['dispatcher'] });
const base = platform.baseUrl;

type Session = Awaited<ReturnType<typeof signInHttp>>;
/** A merchant with a member of each role asked for, signed in. */
async function team(roles: string[]) {
  const m = await dashboardMerchant(platform);
  const members: { id: string; email: string; session: Session }[] = [];
  for (const [i, role] of roles.entries()) {
    const email = i === 0 ? m.email : `${role}-${i}-${m.id}@example.com`;
    if (i > 0) await createDashboardUser(platform.sql, m.id, email);
    const [u] = await platform.sql<{ id: string }[]>`
      update dashboard_users set role = ${role} where lower(email) = lower(${email}) returning id`;
    members.push({ id: u!.id, email, session: await signInHttp(base, email) });
  }
  return { merchant: m, members };
}
function refused(t: Test, res: { status: number; body: any }, status: number, code: string, message?: RegExp) {
  t.equal(res.status, status, `status ${status}`);
  t.equal(res.body?.error?.code, code);
  if (message) t.match(res.body?.error?.message, message);
}
const as = (s: Session, method: string, path: string, body?: unknown) => sessionRequest(base, s, method, path, body);

t.test('a used, revoked, expired or unknown link is refused in words', async (t) => {
  const { members } = await team(['owner']);
  const owner = members[0]!.session;
  const used = await invite(base, owner, `used-${members[0]!.id}@example.com`);
  t.equal((await acceptHttp(base, used.token)).status, 204);
  refused(t, await acceptHttp(base, used.token), 400, 'INVALID_INPUT', /accepted already/);

  const revoked = await invite(base, owner, `revoked-${members[0]!.id}@example.com`);
  await as(owner, 'DELETE', `/dashboard/api/invitations/${revoked.invitation.id}`);
  refused(t, await acceptHttp(base, revoked.token), 400, 'INVALID_INPUT', /revoked/);
  const preview = await fetch(`${base}/dashboard/api/invitations/preview`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: revoked.token }),
  });
  refused(t, { status: preview.status, body: await preview.json() }, 400, 'INVALID_INPUT', /revoked/);

  const expired = await invite(base, owner, `expired-${members[0]!.id}@example.com`);
  await platform.sql`
    update dashboard_invitations set expires_at = now() - interval '1 second' where id = ${expired.invitation.id}`;
  const res = await acceptHttp(base, expired.token);
  refused(t, res, 400, 'INVALID_INPUT', /over 7 days old/);
  t.same(res.body.error.details, [{ path: 'token', message: 'expired' }]);
  const listed = await as(owner, 'GET', '/dashboard/api/invitations');
  t.match(listed.body.data, [{ id: expired.invitation.id, expired: true }], 'an expired one is listed, to resend');
  const again = await as(owner, 'POST', `/dashboard/api/invitations/${expired.invitation.id}/resend`);
  t.equal(again.status, 200, 'resent, it lives again');
  t.equal(again.body.expired, false);

  refused(t, await acceptHttp(base, 'A'.repeat(43)), 400, 'INVALID_INPUT', /not valid/);
  refused(t, await acceptHttp(base, 'short'), 400, 'INVALID_INPUT');
  refused(t, await acceptHttp(base, used.token, 'short'), 400, 'INVALID_INPUT');
  const users = await platform.sql`select 1 from dashboard_users where email like ${'%-' + members[0]!.id + '@%'}`;
  t.equal(users.length, 1, 'only the accepted invitation made a member');
});

t.test('an address that already has an account is refused clearly; the invitation stays open', async (t) => {
  const { members } = await team(['owner']);
  const elsewhere = await dashboardMerchant(platform);
  const { invitation, token } = await invite(base, members[0]!.session, elsewhere.email.toUpperCase());
  const res = await acceptHttp(base, token);
  refused(t, res, 409, 'CONFLICT', /already has a dashboard account/);
  t.equal(res.cookie, undefined, 'nobody signed in');
  const [row] = await platform.sql`select accepted_at from dashboard_invitations where id = ${invitation.id}`;
  t.equal(row!['accepted_at'], null);
  const [user] = await platform.sql`select merchant_id from dashboard_users where email = ${elsewhere.email}`;
  t.equal(user!['merchant_id'], elsewhere.id, 'the account stays where it was');
});

t.test('a member, or an address with an open invitation, is not invited again', async (t) => {
  const { members } = await team(['owner', 'viewer']);
  const owner = members[0]!.session;
  const member = await as(owner, 'POST', '/dashboard/api/invitations', { email: members[1]!.email.toUpperCase() });
  refused(t, member, 409, 'CONFLICT', /already a member/);
  const email = `twice-${members[0]!.id}@example.com`;
  await invite(base, owner, email);
  refused(t, await as(owner, 'POST', '/dashboard/api/invitations', { email }), 409, 'CONFLICT', /open invitation/);
  const twoAtOnce = await Promise.all(
    [1, 2].map(() => as(owner, 'POST', '/dashboard/api/invitations', { email: `race-${email}` })),
  );
  t.same(twoAtOnce.map((r) => r.status).sort(), [201, 409], 'the same address invited twice at once: one invitation');
  refused(t, await as(owner, 'POST', '/dashboard/api/invitations', { email: 'not an address' }), 400, 'INVALID_INPUT');
});

t.test('only an owner invites an owner, or resends or revokes an owner’s invitation', async (t) => {
  const { members } = await team(['owner', 'admin', 'developer']);
  const [owner, admin, developer] = members as [(typeof members)[0], (typeof members)[0], (typeof members)[0]];
  const email = `owner-to-be-${owner.id}@example.com`;
  refused(t, await as(admin.session, 'POST', '/dashboard/api/invitations', { email, role: 'owner' }), 403, 'FORBIDDEN');
  const { invitation } = await invite(base, owner.session, email, 'owner');
  refused(t, await as(admin.session, 'POST', `/dashboard/api/invitations/${invitation.id}/resend`), 403, 'FORBIDDEN');
  refused(t, await as(admin.session, 'DELETE', `/dashboard/api/invitations/${invitation.id}`), 403, 'FORBIDDEN');
  const byAdmin = await as(admin.session, 'POST', '/dashboard/api/invitations', { email: `a-${email}`, role: 'admin' });
  t.equal(byAdmin.status, 201, 'an admin invites an admin');
  refused(
    t,
    await as(developer.session, 'POST', '/dashboard/api/invitations', { email: `d-${email}` }),
    403,
    'FORBIDDEN',
  );
  refused(t, await as(developer.session, 'GET', '/dashboard/api/invitations'), 403, 'FORBIDDEN');
});

t.test('invitation mails are limited per merchant and hour', async (t) => {
  const { members } = await team(['owner']);
  const owner = members[0]!.session;
  const answers = [];
  for (let i = 0; i < 31; i++)
    answers.push(
      await as(owner, 'POST', '/dashboard/api/invitations', { email: `many-${i}-${members[0]!.id}@example.com` }),
    );
  t.equal(answers.filter((r) => r.status === 201).length, 30);
  const last = answers[30]!;
  refused(t, last, 429, 'RATE_LIMITED');
  t.ok(Number(last.headers.get('retry-after')) > 0, 'Retry-After says when');
  const other = await team(['owner']);
  const elsewhere = await as(other.members[0]!.session, 'POST', '/dashboard/api/invitations', {
    email: `one-${other.members[0]!.id}@example.com`,
  });
  t.equal(elsewhere.status, 201, 'another merchant is not limited by this one');
});

t.test('ownership is handed over by an owner only, to another member', async (t) => {
  const { members } = await team(['owner', 'admin', 'developer']);
  const [owner, admin, developer] = members as [(typeof members)[0], (typeof members)[0], (typeof members)[0]];
  const path = (id: string) => `/dashboard/api/users/${id}/transfer_ownership`;
  refused(t, await as(admin.session, 'POST', path(developer.id)), 403, 'FORBIDDEN', /Only an owner/);
  refused(t, await as(developer.session, 'POST', path(developer.id)), 403, 'FORBIDDEN');
  refused(t, await as(owner.session, 'POST', path(owner.id)), 409, 'CONFLICT');
  refused(t, await as(owner.session, 'POST', path('usr_unknown')), 404, 'NOT_FOUND');
  const roles = await platform.sql<{ id: string; role: string }[]>`
    select id, role from dashboard_users where id = any(${members.map((m) => m.id)}) order by id`;
  t.same(
    Object.fromEntries(roles.map((r) => [r.id, r.role])),
    { [owner.id]: 'owner', [admin.id]: 'admin', [developer.id]: 'developer' },
    'nothing changed',
  );
});
