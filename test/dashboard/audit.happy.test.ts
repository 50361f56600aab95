import t from 'tap';
import { createDashboardUser, sessionRequest, signInHttp, startDashboardPlatform } from '../helpers/dashboard.ts';

/**
 * Settings → Audit log: each team and settings change leaves one entry (who, what, when, from where) written with the
 * change, newest first and paged; a refused change leaves none; another merchant's log is not there.
 */
const { platform } = await startDashboardPlatform(t);
const base = platform.baseUrl;

async function owner() {
  const merchant = await platform.merchant({ plan: 'growth' });
  const email = `owner-${merchant.id}@example.com`;
  await createDashboardUser(platform.sql, merchant.id, email);
  const session = await signInHttp(base, email);
  return {
    merchant,
    email,
    call: (method: string, path: string, body?: unknown) => sessionRequest(base, session, method, path, body),
  };
}

t.test('team and settings changes are logged with who, what and from where', async (t) => {
  const o = await owner();
  const added = await o.call('POST', '/dashboard/api/users', {
    email: `dev-${o.merchant.id}@example.com`,
    password: 'long enough password',
    role: 'developer',
  });
  t.equal(added.status, 201);
  await o.call('PATCH', `/dashboard/api/users/${added.body.id}`, { role: 'admin' });
  await o.call('PATCH', '/dashboard/api/settings', { hold_days: 14 });
  await o.call('POST', '/dashboard/api/tiers', { name: 'Gold', rate: 0.2, threshold: 1000 });
  await o.call('DELETE', `/dashboard/api/users/${added.body.id}`);
  // Refused: the last owner demoting itself. Nothing is logged for it.
  const users = await o.call('GET', '/dashboard/api/users');
  const self = users.body.data.find((u: { email: string }) => u.email === o.email);
  t.equal((await o.call('PATCH', `/dashboard/api/users/${self.id}`, { role: 'viewer' })).status, 409);

  const log = await o.call('GET', '/dashboard/api/audit');
  t.equal(log.status, 200);
  t.same(
    log.body.data.map((e: { action: string }) => e.action),
    ['user.removed', 'tier.created', 'settings.updated', 'user.role_changed', 'user.added'],
    'newest first, the refused change absent',
  );
  t.match(log.body.data[3], {
    actor: o.email,
    target: added.body.id,
    detail: { email: `dev-${o.merchant.id}@example.com`, from: 'developer', to: 'admin' },
    ip: /^(::ffff:)?127\.0\.0\.1$|^::1$/,
  });
  t.same(log.body.data[2].detail, { hold_days: 14 });
  t.equal(log.body.next_cursor, null);
});

t.test('the log pages 25 at a time; a cursor is the merchant’s own', async (t) => {
  const o = await owner();
  for (let i = 0; i < 27; i++) await o.call('POST', '/dashboard/api/tiers', { name: `T${i}`, rate: 0.1, threshold: i });
  const first = await o.call('GET', '/dashboard/api/audit');
  t.equal(first.body.data.length, 25);
  t.ok(first.body.next_cursor);
  const second = await o.call('GET', `/dashboard/api/audit?cursor=${encodeURIComponent(first.body.next_cursor)}`);
  t.same(
    second.body.data.map((e: { detail: { name: string } }) => e.detail.name),
    ['T1', 'T0'],
  );
  t.equal(second.body.next_cursor, null);

  const other = await owner();
  t.same((await other.call('GET', '/dashboard/api/audit')).body.data, [], 'another merchant sees none of it');
  const stolen = await other.call('GET', `/dashboard/api/audit?cursor=${encodeURIComponent(first.body.next_cursor)}`);
  t.equal(stolen.status, 400, 'nor pages it with its cursor');
  t.equal(stolen.body.error.code, 'INVALID_INPUT');
});
