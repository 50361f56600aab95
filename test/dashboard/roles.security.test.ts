import t from 'tap';
import { operations } from '@platform/shared/api';
import { dashboardSpecs } from '@platform/gateway/surfaces/dashboard/specs';
import {
  apiPermission,
  can,
  GRANTS,
  ROLES,
  type Permission,
  type Role,
} from '@platform/gateway/http/accounts/permissions';
import { createDashboardUser, sessionRequest, signInHttp, startDashboardPlatform } from '../helpers/dashboard.ts';

/**
 * The permission table (services/gateway/src/http/accounts/permissions.ts), enforced: every dashboard route
 * and every /api/v1 operation a dashboard session calls answers 403 FORBIDDEN in the error envelope to each role
 * without its permission, before reading the input, and does not refuse the least role that has it.
 */
// A short RPC bound: the operations allowed are forwarded to services this file does not start (503 is fine here).
const { platform } = await startDashboardPlatform(t, { env: { RPC_TIMEOUT_MS: '300' } });
const base = platform.baseUrl;
const merchant = await platform.merchant({ plan: 'scale' });

const sessions = {} as Record<Role, Awaited<ReturnType<typeof signInHttp>>>;
for (const role of ROLES) {
  const email = `${role}-${merchant.id}@example.com`;
  await createDashboardUser(platform.sql, merchant.id, email);
  await platform.sql`update dashboard_users set role = ${role} where lower(email) = lower(${email})`;
  sessions[role] = await signInHttp(base, email);
}

/** A path template with its parameters filled by ids that exist nowhere (the refusal comes before the lookup). */
const concrete = (path: string) => path.replace(/\{[a-z_]+\}/g, 'x_unknown');
const call = (role: Role, method: string, path: string) =>
  sessionRequest(base, sessions[role], method.toUpperCase(), concrete(path), method === 'get' ? undefined : {});

/** Every route a dashboard session reaches, with the permission the table gives it. */
const routes: { method: string; path: string; permission: Permission }[] = [
  ...Object.values(dashboardSpecs)
    .filter((s) => s.permission !== null)
    .map((s) => ({ method: s.method, path: s.path, permission: s.permission! })),
  ...operations
    .filter((op) => op.path.startsWith('/api/v1/'))
    .map((op) => ({ method: op.method, path: op.path, permission: apiPermission(op) })),
];
/** The least role that holds a permission: the one whose success says the most. */
const leastWith = (permission: Permission) => [...ROLES].reverse().find((r) => can(r, permission))!;

t.test('the session says the role and what it allows', async (t) => {
  for (const role of ROLES) {
    const res = await sessionRequest(base, sessions[role], 'GET', '/dashboard/api/session');
    t.equal(res.body.session.user.role, role);
    t.same(res.body.session.user.permissions, GRANTS[role], `${role}'s permissions`);
  }
});

t.test('a role without the permission gets 403 FORBIDDEN on every route, with the envelope', async (t) => {
  let refusals = 0;
  for (const r of routes) {
    for (const role of ROLES.filter((role) => !can(role, r.permission))) {
      const res = await call(role, r.method, r.path);
      const where = `${role} ${r.method.toUpperCase()} ${r.path}`;
      t.equal(res.status, 403, where);
      t.equal(res.body?.error?.code, 'FORBIDDEN', where);
      t.match(res.body?.error?.message, new RegExp(`^Your role \\(${role}\\) may not `), where);
      t.equal(res.body?.error?.request_id, res.headers.get('x-request-id'), where);
      refusals++;
    }
  }
  t.ok(refusals >= 40, `${refusals} refusals checked`);
});

t.test('the least role with the permission is not refused by the table', async (t) => {
  for (const r of routes) {
    const role = leastWith(r.permission);
    const res = await call(role, r.method, r.path);
    // A route may refuse for a rule of its own beyond the table (only an owner hands over ownership): what must not
    // happen is the table's refusal of a role that holds the permission.
    const byTable = res.status === 403 && /^Your role \(/.test(res.body?.error?.message ?? '');
    t.notOk(byTable, `${role} ${r.method.toUpperCase()} ${r.path}: ${res.body?.error?.message ?? res.status}`);
    t.not(res.status, 500, `${role} ${r.method.toUpperCase()} ${r.path} is not a 500`);
  }
});

t.test('what each role may do, end to end', async (t) => {
  const key = await sessionRequest(base, sessions.developer, 'POST', '/dashboard/api/keys', { scopes: ['read'] });
  t.equal(key.status, 201, 'a developer creates a key');
  const viewerKey = await sessionRequest(base, sessions.viewer, 'POST', '/dashboard/api/keys', { scopes: ['read'] });
  t.equal(viewerKey.status, 403, 'a viewer does not');
  const affiliate = { email: 'roles@example.com' };
  t.equal(
    (await sessionRequest(base, sessions.developer, 'POST', '/api/v1/affiliates', affiliate)).status,
    403,
    'a developer does not create affiliates',
  );
  t.equal(
    (await sessionRequest(base, sessions.admin, 'POST', '/api/v1/affiliates', affiliate)).status,
    201,
    'an admin does',
  );
  const list = await sessionRequest(base, sessions.viewer, 'GET', '/api/v1/affiliates');
  t.equal(list.status, 200, 'a viewer reads them');
  t.equal(list.body.data.length, 1);
  // An API key is not a user: its scopes decide, whatever any user's role.
  const byKey = await merchant.client.post('/api/v1/affiliates', { email: 'by-key@example.com' });
  t.equal(byKey.status, 201, 'a key with the write scope creates an affiliate');
});

t.test('a role changed while its session is open applies at the next request', async (t) => {
  const email = `promoted-${merchant.id}@example.com`;
  await createDashboardUser(platform.sql, merchant.id, email);
  const owner = sessions.owner;
  const users = await sessionRequest(base, owner, 'GET', '/dashboard/api/users');
  const promoted = users.body.data.find((u: { email: string }) => u.email === email);
  await sessionRequest(base, owner, 'PATCH', `/dashboard/api/users/${promoted.id}`, { role: 'viewer' });
  const session = await signInHttp(base, email);
  t.equal((await sessionRequest(base, session, 'POST', '/dashboard/api/keys', { scopes: ['read'] })).status, 403);
  await sessionRequest(base, owner, 'PATCH', `/dashboard/api/users/${promoted.id}`, { role: 'developer' });
  t.equal(
    (await sessionRequest(base, session, 'POST', '/dashboard/api/keys', { scopes: ['read'] })).status,
    201,
    'the same session, now a developer',
  );
});
