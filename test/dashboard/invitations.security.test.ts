import t from 'tap';
import { dashboardMerchant, sessionRequest, signInHttp, startDashboardPlatform } from '../helpers/dashboard.ts';
import { acceptHttp, invite } from '../helpers/invitations.ts';

/**
 * Invitations across merchants and under races: another merchant's invitation is not there (404, not listed), one
 * link accepted many times at once makes one member, a link chooses nothing but the password (the role is the
 * invitation's), its token is nowhere in the database in the clear, and an owner handing ownership to two members
 * at once leaves one owner.
 */
const { platform } = await startDashboardPlatform(t, { services: ['dispatcher'] });
const base = platform.baseUrl;
const mine = await dashboardMerchant(platform);
const theirs = await dashboardMerchant(platform);
const me = await signInHttp(base, mine.email);
const them = await signInHttp(base, theirs.email);

t.test('another merchant’s invitation is not found, nor listed', async (t) => {
  const { invitation } = await invite(base, them, `theirs-${theirs.id}@example.com`);
  for (const [method, path] of [
    ['POST', `/dashboard/api/invitations/${invitation.id}/resend`],
    ['DELETE', `/dashboard/api/invitations/${invitation.id}`],
  ] as const) {
    const res = await sessionRequest(base, me, method, path);
    t.equal(res.status, 404, `${method} ${path}`);
    t.equal(res.body.error.code, 'NOT_FOUND');
  }
  t.same((await sessionRequest(base, me, 'GET', '/dashboard/api/invitations')).body.data, []);
  const [row] = await platform.sql`select revoked_at, sent_at = created_at as unsent from dashboard_invitations
    where id = ${invitation.id}`;
  t.match(row, { revoked_at: null, unsent: true }, 'neither revoked nor resent');
});

t.test('one link accepted many times at once makes one member', async (t) => {
  for (let round = 0; round < 3; round++) {
    const email = `race-${round}-${mine.id}@example.com`;
    const { token } = await invite(base, me, email);
    const answers = await Promise.all([1, 2, 3, 4].map(() => acceptHttp(base, token)));
    t.same(answers.map((a) => a.status).sort(), [204, 400, 400, 400], `round ${round}: one accepted, the rest refused`);
    t.equal(answers.filter((a) => a.cookie).length, 1, 'one session');
    const users = await platform.sql`select id from dashboard_users where lower(email) = ${email}`;
    t.equal(users.length, 1, 'one user');
  }
});

t.test('the link sets the password only: the role is the invitation’s, the token is stored hashed', async (t) => {
  const email = `viewer-${mine.id}@example.com`;
  const { token } = await invite(base, me, email, 'viewer');
  const promoted = await acceptHttp(base, token, 'a long enough password', { role: 'owner' });
  t.equal(promoted.status, 400, 'no role in the body');
  t.equal(promoted.body.error.code, 'INVALID_INPUT');
  const accepted = await acceptHttp(base, token);
  t.equal(accepted.status, 204);
  const session = await sessionRequest(base, { cookie: accepted.cookie }, 'GET', '/dashboard/api/session');
  t.match(session.body.session.user, { email, role: 'viewer' });
  const keys = await sessionRequest(
    base,
    { cookie: accepted.cookie, csrf: session.body.session.csrf_token },
    'POST',
    '/dashboard/api/keys',
    { scopes: ['read'] },
  );
  t.equal(keys.status, 403, 'a viewer creates no key');
  const [clear] = await platform.sql`
    select count(*)::int as n from dashboard_invitations i, mails m
    where encode(i.token_hash, 'escape') like ${'%' + token + '%'} or m.content_encrypted like ${'%' + token + '%'}
      or m.subject like ${'%' + token + '%'}`;
  t.equal(clear!['n'], 0, 'the token is not stored in the clear');
});

t.test('an owner handing ownership to two members at once leaves one owner', async (t) => {
  for (let round = 0; round < 3; round++) {
    const m = await dashboardMerchant(platform);
    const owner = await signInHttp(base, m.email);
    const ids: string[] = [];
    for (const n of [1, 2]) {
      const email = `heir-${n}-${m.id}@example.com`;
      await acceptHttp(base, (await invite(base, owner, email, 'admin')).token);
      ids.push((await platform.sql<{ id: string }[]>`select id from dashboard_users where email = ${email}`)[0]!.id);
    }
    const answers = await Promise.all(
      ids.map((id) => sessionRequest(base, owner, 'POST', `/dashboard/api/users/${id}/transfer_ownership`)),
    );
    t.same(answers.map((a) => a.status).sort(), [200, 403], `round ${round}: one hand-over, the other refused`);
    const owners = await platform.sql`select id from dashboard_users where merchant_id = ${m.id} and role = 'owner'`;
    t.equal(owners.length, 1, 'one owner');
  }
});
