import t, { type Test } from 'tap';
import { createDashboardUser, sessionRequest, signInHttp, startDashboardPlatform } from '../helpers/dashboard.ts';

/**
 * Settings → Team: roles changed and members removed under the rules of team-rules.ts. The owner role is an owner's
 * to give or take, a merchant never loses its last owner (not even to two owners demoting each other at once), a
 * removed member's sessions end at once, and another merchant's members are not there at all (404).
 */
const { platform } = await startDashboardPlatform(t);
const base = platform.baseUrl;

async function team(roles: string[]) {
  const merchant = await platform.merchant({ plan: 'growth' });
  const members = [];
  for (const [i, role] of roles.entries()) {
    const email = `${role}-${i}-${merchant.id}@example.com`;
    const user = (await createDashboardUser(platform.sql, merchant.id, email))!;
    await platform.sql`update dashboard_users set role = ${role} where id = ${user['id'] as string}`;
    members.push({ id: user['id'] as string, role, session: await signInHttp(base, email) });
  }
  return { merchant, members };
}
/** The error envelope with this status and code, its request_id the response's. */
function refused(t: Test, res: Awaited<ReturnType<typeof sessionRequest>>, status: number, code: string) {
  t.equal(res.status, status, `status ${status}`);
  t.equal(res.body?.error?.code, code);
  t.equal(res.body?.error?.request_id, res.headers.get('x-request-id'));
}
const as = (m: { session: Awaited<ReturnType<typeof signInHttp>> }, method: string, path: string, body?: unknown) =>
  sessionRequest(base, m.session, method, path, body);

t.test('an admin manages everyone but owners', async (t) => {
  const { members } = await team(['owner', 'admin', 'viewer']);
  const [owner, admin, viewer] = members as [(typeof members)[0], (typeof members)[0], (typeof members)[0]];
  const promoted = await as(admin, 'PATCH', `/dashboard/api/users/${viewer.id}`, { role: 'developer' });
  t.equal(promoted.status, 200);
  t.equal(promoted.body.role, 'developer');
  refused(t, await as(admin, 'PATCH', `/dashboard/api/users/${viewer.id}`, { role: 'owner' }), 403, 'FORBIDDEN');
  refused(t, await as(admin, 'PATCH', `/dashboard/api/users/${owner.id}`, { role: 'viewer' }), 403, 'FORBIDDEN');
  refused(t, await as(admin, 'DELETE', `/dashboard/api/users/${owner.id}`), 403, 'FORBIDDEN');
  const added = await as(admin, 'POST', '/dashboard/api/users', {
    email: `added-${owner.id}@example.com`,
    password: 'long enough password',
    role: 'owner',
  });
  refused(t, added, 403, 'FORBIDDEN');
  const viewerAdded = await as(admin, 'POST', '/dashboard/api/users', {
    email: `viewer-${owner.id}@example.com`,
    password: 'long enough password',
  });
  t.equal(viewerAdded.status, 201);
  t.equal(viewerAdded.body.role, 'viewer', 'a user added without a role is a viewer');
  const byOwner = await as(owner, 'PATCH', `/dashboard/api/users/${admin.id}`, { role: 'owner' });
  t.equal(byOwner.body.role, 'owner', 'an owner makes another owner');
});

t.test('the last owner is neither demoted nor removed', async (t) => {
  const { members } = await team(['owner', 'admin']);
  const [owner] = members as [(typeof members)[0]];
  refused(t, await as(owner, 'PATCH', `/dashboard/api/users/${owner.id}`, { role: 'admin' }), 409, 'CONFLICT');
  refused(t, await as(owner, 'DELETE', `/dashboard/api/users/${owner.id}`), 409, 'CONFLICT');
  const [row] = await platform.sql<{ role: string }[]>`select role from dashboard_users where id = ${owner.id}`;
  t.equal(row!.role, 'owner');
});

t.test('two owners demoting each other at once leave one owner', async (t) => {
  for (let round = 0; round < 5; round++) {
    const { merchant, members } = await team(['owner', 'owner']);
    const [a, b] = members as [(typeof members)[0], (typeof members)[0]];
    const answers = await Promise.all([
      as(a, 'PATCH', `/dashboard/api/users/${b.id}`, { role: 'viewer' }),
      as(b, 'DELETE', `/dashboard/api/users/${a.id}`),
    ]);
    const [won, lost] = answers.map((r) => r.status).sort();
    // The loser is refused as the winner left it: still an owner but the last (409), demoted (403) or removed (401).
    t.ok([200, 204].includes(won!) && [401, 403, 409].includes(lost!), `one change wins: ${won}, ${lost}`);
    const owners = await platform.sql`
      select id from dashboard_users where merchant_id = ${merchant.id} and role = 'owner'`;
    t.equal(owners.length, 1, 'exactly one owner remains');
  }
});

t.test("a removed member's sessions end at once", async (t) => {
  const { members } = await team(['owner', 'developer']);
  const [owner, developer] = members as [(typeof members)[0], (typeof members)[0]];
  t.equal((await as(developer, 'GET', '/dashboard/api/keys')).status, 200);
  t.equal((await as(owner, 'DELETE', `/dashboard/api/users/${developer.id}`)).status, 204);
  refused(t, await as(developer, 'GET', '/dashboard/api/keys'), 401, 'UNAUTHORIZED');
  refused(t, await as(developer, 'GET', '/api/v1/affiliates'), 401, 'UNAUTHORIZED');
  const list = await as(owner, 'GET', '/dashboard/api/users');
  t.same(
    list.body.data.map((u: { id: string }) => u.id),
    [owner.id],
  );
});

t.test("another merchant's members are not found; bad input is 400", async (t) => {
  const ours = await team(['owner', 'viewer']);
  const theirs = await team(['owner']);
  const [theirOwner] = theirs.members as [(typeof theirs.members)[0]];
  const victim = ours.members[1]!;
  refused(t, await as(theirOwner, 'PATCH', `/dashboard/api/users/${victim.id}`, { role: 'owner' }), 404, 'NOT_FOUND');
  refused(t, await as(theirOwner, 'DELETE', `/dashboard/api/users/${victim.id}`), 404, 'NOT_FOUND');
  const [row] = await platform.sql<{ role: string }[]>`select role from dashboard_users where id = ${victim.id}`;
  t.equal(row!.role, 'viewer', 'untouched');
  const owner = ours.members[0]!;
  refused(t, await as(owner, 'PATCH', `/dashboard/api/users/${victim.id}`, { role: 'root' }), 400, 'INVALID_INPUT');
  refused(t, await as(owner, 'PATCH', `/dashboard/api/users/${victim.id}`, {}), 400, 'INVALID_INPUT');
  refused(t, await as(owner, 'DELETE', `/dashboard/api/users/${'x'.repeat(65)}`), 400, 'INVALID_INPUT');
});
