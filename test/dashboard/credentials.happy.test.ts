import { randomBytes, scryptSync } from 'node:crypto';
import t from 'tap';
import { PASSWORD_COST } from '@platform/shared/passwords';
import { loadGatewayConfig } from '@platform/gateway/config';
import { startGateway } from '@platform/gateway/service';
import { captureLogger, eventually } from '../helpers/platform.ts';
import {
  dashboardMerchant,
  PASSWORD,
  sessionRequest,
  signInHttp,
  startDashboardPlatform,
} from '../helpers/dashboard.ts';

// How the gateway keeps dashboard credentials: passwords at today's scrypt cost (older hashes still sign in and are
// replaced), its security-relevant writes committed durably, and sign-in failures purged after their retention.
const { platform } = await startDashboardPlatform(t, {
  env: { PASSWORD_HASH_COST: String(PASSWORD_COST) }, // the work factor is what this file is about
});
const base = platform.baseUrl;

t.test('a password hashed at the old cost (N=2^14) signs in and is rehashed at N=2^17', async (t) => {
  const m = await dashboardMerchant(platform);
  const salt = randomBytes(16);
  const old = [
    'scrypt',
    16384,
    8,
    1,
    salt.toString('base64url'),
    scryptSync(PASSWORD, salt, 32, { N: 16384, r: 8, p: 1 }).toString('base64url'),
  ].join('$');
  await platform.sql`update dashboard_users set password_hash = ${old} where email = ${m.email}`;
  const stored = async () =>
    (await platform.sql<{ h: string }[]>`select password_hash as h from dashboard_users where email = ${m.email}`)[0]!
      .h;

  t.equal((await signInHttp(base, m.email, 'not the password')).status, 401);
  t.equal(await stored(), old, 'a wrong password changes nothing');
  t.equal((await signInHttp(base, m.email)).status, 201, 'the old hash still verifies');
  const fresh = await stored();
  t.match(fresh, /^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/, 'replaced at today’s cost');
  t.not(fresh, old);
  t.equal((await signInHttp(base, m.email)).status, 201, 'and the new hash verifies');
  t.equal(await stored(), fresh, 'a hash at today’s cost is kept');
  t.ok(
    platform.logs.some((l) => l.includes('dashboard password rehashed')),
    'the rehash is logged (without the password)',
  );
  t.notOk(
    platform.logs.some((l) => l.includes(PASSWORD)),
    'no password in the logs',
  );
});

t.test('sign-in failures, sessions, sign-out, key revocation, users and settings commit durably', async (t) => {
  // Every write to these tables records the synchronous_commit it ran under and the connection's application.
  await platform.sql.unsafe(`
    create table commit_modes (tbl text, op text, mode text, app text);
    create function record_commit_mode() returns trigger language plpgsql as $$
    begin
      insert into commit_modes values (tg_table_name, tg_op, current_setting('synchronous_commit'),
                                       current_setting('application_name'));
      return null;
    end $$;
    create trigger commit_mode after insert or update or delete on dashboard_signin_failures
      for each statement execute function record_commit_mode();
    create trigger commit_mode after insert or update or delete on dashboard_sessions
      for each statement execute function record_commit_mode();
    create trigger commit_mode after insert or update or delete on api_keys
      for each statement execute function record_commit_mode();
    create trigger commit_mode after insert or update or delete on dashboard_users
      for each statement execute function record_commit_mode();
    create trigger commit_mode after insert or update or delete on merchants
      for each statement execute function record_commit_mode();`);
  t.teardown(() =>
    platform.sql.unsafe(`
      drop trigger commit_mode on dashboard_signin_failures; drop trigger commit_mode on dashboard_sessions;
      drop trigger commit_mode on api_keys; drop trigger commit_mode on dashboard_users;
      drop trigger commit_mode on merchants; drop function record_commit_mode(); drop table commit_modes;`),
  );
  const m = await dashboardMerchant(platform);
  await platform.sql`delete from commit_modes`;

  t.equal((await signInHttp(base, m.email, 'wrong password')).status, 401);
  const signed = await signInHttp(base, m.email);
  t.equal(signed.status, 201);
  const [key] = await platform.sql<{ id: string }[]>`select id from api_keys where merchant_id = ${m.id}`;
  const calls: [string, string, unknown?][] = [
    ['POST', `/dashboard/api/keys/${key!.id}/revoke`],
    ['POST', '/dashboard/api/users', { email: `second-${m.id}@example.com`, password: 'another long password' }],
    ['PATCH', '/dashboard/api/settings', { payout_day: 15 }],
    ['DELETE', '/dashboard/api/session'],
  ];
  for (const [method, path, body] of calls) {
    const res = await sessionRequest(base, signed, method, path, body);
    t.ok(res.status < 300, `${method} ${path}: ${res.status}`);
  }
  const rows = await platform.sql<{ tbl: string; op: string; mode: string }[]>`
    select distinct tbl, op, mode from commit_modes where app like 'gateway%' order by tbl, op, mode`;
  const seen = new Set(rows.map((r) => `${r.tbl} ${r.op}`));
  for (const write of [
    'dashboard_signin_failures INSERT',
    'dashboard_signin_failures UPDATE',
    'dashboard_sessions INSERT',
    'dashboard_sessions DELETE',
    'api_keys UPDATE',
    'dashboard_users INSERT',
    'merchants UPDATE',
  ])
    t.ok(seen.has(write), `${write} was made by the gateway`);
  t.same(
    rows.filter((r) => r.mode !== 'on').map((r) => `${r.tbl} ${r.op} ${r.mode}`),
    [],
    'every one with synchronous_commit on',
  );
});

t.test('sign-in failures are purged a day after their window opened', async (t) => {
  await platform.sql`
    insert into dashboard_signin_failures (subject, window_start, count) values
      ('account:old@example.com', now() - interval '25 hours', 3),
      ('ip:192.0.2.99', now() - interval '25 hours', 7),
      ('account:recent@example.com', now() - interval '23 hours', 2)`;
  // The purge runs when a gateway starts (then hourly): a second replica starting is enough.
  const log = captureLogger('gateway-purge');
  const gateway = await startGateway(loadGatewayConfig(platform.env), log.log);
  t.teardown(() => gateway.close());
  await eventually(
    async () =>
      (await platform.sql`select 1 from dashboard_signin_failures where subject = 'account:old@example.com'`).length ===
      0
        ? true
        : undefined,
    10_000,
    'the purge',
  );
  const left = await platform.sql<{ subject: string }[]>`
    select subject from dashboard_signin_failures
    where subject in ('account:old@example.com', 'ip:192.0.2.99', 'account:recent@example.com')`;
  t.same(
    left.map((r) => r.subject),
    ['account:recent@example.com'],
    'rows past the day are gone, younger ones kept',
  );
  t.ok(log.lines.some((l) => l.includes('dashboard sign-in failures past the retention deleted')));
});
