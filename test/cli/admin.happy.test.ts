import { createHash, scrypt as scryptCb } from 'node:crypto';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { runAdmin, spawnAdmin, type CliRun as Run } from '../helpers/cli.ts';
import { createLogger } from '@platform/shared/log';
import { loadGatewayConfig } from '@platform/gateway/config';
import { startGateway } from '@platform/gateway/service';
import { createKey, createMerchant } from '../../scripts/admin/commands.ts';
import { sleep, startPlatform } from '../helpers/platform.ts';

/**
 * The operator CLI against the platform's database: JSON on stdout, errors on stderr with a non-zero exit. The
 * commands run in this process (helpers/cli.ts); the first test runs the binary itself, as operators do.
 */
const platform = await startPlatform(t);
const scrypt = promisify(scryptCb) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: object,
) => Promise<Buffer>;

const admin = (...args: string[]) => runAdmin(platform.databaseUrl, ...args);

/** A command that worked: exit 0, JSON on stdout, nothing on stderr. */
function succeeded(t: Test, run: Run, what: string) {
  t.equal(run.code, 0, `${what}: exit 0 (stderr: ${run.stderr.trim()})`);
  t.equal(run.stderr, '', `${what}: nothing on stderr`);
  t.ok(run.json && typeof run.json === 'object', `${what}: JSON on stdout`);
  return run.json;
}

/** A command that was refused: non-zero exit, a message on stderr, nothing on stdout. */
function refused(t: Test, run: Run, what: string, message: RegExp) {
  t.not(run.code, 0, `${what}: non-zero exit`);
  t.equal(run.stdout, '', `${what}: nothing on stdout`);
  t.match(run.stderr, message, `${what}: says why on stderr`);
}

/** Set-up only (merchant create itself is tested through the CLI below): the same command, in this process. */
async function newMerchant(plan: string): Promise<string> {
  return (await createMerchant(platform.sql, `Shop on ${plan}`, plan))!['id'] as string;
}

const keyRows = async (merchantId: string) => platform.sql`select id from api_keys where merchant_id = ${merchantId}`;

/** Every value of every row of every table, as text (bytea as hex and base64), to search for secrets. */
async function wholeDatabaseText(): Promise<string> {
  const tables = await platform.sql<{ table_name: string }[]>`
    select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`;
  const parts: string[] = [];
  for (const { table_name } of tables) {
    const rows = await platform.sql.unsafe(`select * from "${table_name}"`);
    for (const row of rows) {
      for (const value of Object.values(row)) {
        if (Buffer.isBuffer(value))
          parts.push(
            value.toString('hex'),
            value.toString('base64'),
            value.toString('base64url'),
            value.toString('latin1'),
          );
        else parts.push(typeof value === 'string' ? value : JSON.stringify(value));
      }
    }
  }
  t.ok(tables.length >= 8, 'searched every table');
  return parts.join('\n');
}

t.test('the binary: JSON on stdout and exit 0, a refusal on stderr and exit 2', async (t) => {
  const env = { DATABASE_URL: platform.databaseUrl };
  const created = succeeded(
    t,
    await spawnAdmin(env, 'merchant', 'create', '--name', 'Binary', '--plan', 'growth'),
    'run',
  );
  t.match(created, { id: /^mer_[0-9a-z]{26}$/, name: 'Binary', plan: 'growth' });
  const refusal = await spawnAdmin(env, 'merchant', 'set-plan', created.id, 'gold');
  refused(t, refusal, 'refused', /plan must be one of/);
  t.equal(refusal.code, 2, 'a usage error exits 2');
});

t.test('merchant create and set-plan', async (t) => {
  const created = succeeded(
    t,
    await admin('merchant', 'create', '--name', 'Acme Outdoor', '--plan', 'growth'),
    'merchant create',
  );
  t.match(created, { id: /^mer_[0-9a-z]{26}$/, name: 'Acme Outdoor', plan: 'growth' });
  const [row] = await platform.sql`select name, plan from merchants where id = ${created.id}`;
  t.strictSame({ ...row }, { name: 'Acme Outdoor', plan: 'growth' }, 'stored');

  const changed = succeeded(t, await admin('merchant', 'set-plan', created.id, 'scale'), 'set-plan');
  t.match(changed, { id: created.id, plan: 'scale' });
  t.equal((await platform.sql`select plan from merchants where id = ${created.id}`)[0]!['plan'], 'scale');

  const before = (await platform.sql`select count(*)::int as n from merchants`)[0]!['n'];
  const [platinum, unknown, gold, blank] = await Promise.all([
    admin('merchant', 'set-plan', created.id, 'platinum'),
    admin('merchant', 'set-plan', 'mer_00000000000000000000000000', 'growth'),
    admin('merchant', 'create', '--name', 'Nope', '--plan', 'gold'),
    admin('merchant', 'create', '--name', '  ', '--plan', 'growth'),
  ]);
  refused(t, platinum, 'set-plan to an unknown plan', /plan must be one of free, starter, growth, scale, enterprise/);
  t.equal((await platform.sql`select plan from merchants where id = ${created.id}`)[0]!['plan'], 'scale', 'unchanged');
  refused(t, unknown, 'set-plan of an unknown merchant', /no merchant/);
  refused(t, gold, 'create with an unknown plan', /plan must be one of/);
  refused(t, blank, 'create with a blank name', /--name/);
  t.equal((await platform.sql`select count(*)::int as n from merchants`)[0]!['n'], before, 'no merchant created');
});

t.test('key create prints the value once and stores only its hash', async (t) => {
  const merchantId = await newMerchant('growth');
  const out = succeeded(t, await admin('key', 'create', merchantId, '--scopes', 'read,write'), 'key create');
  t.match(out, {
    id: /^key_[0-9a-z]{26}$/,
    merchant_id: merchantId,
    scopes: ['read', 'write'],
    rate_limit_per_min: 600,
  });
  const key = out.key as string;
  t.match(key, /^svc_[A-Za-z0-9_-]{43,}$/, 'svc_ and at least 43 characters (32 random bytes)');

  const [row] = await platform.sql<{ key_hash: Buffer; prefix: string; scopes: string[] }[]>`
    select key_hash, prefix, scopes from api_keys where id = ${out.id}`;
  t.ok(row, 'a key row');
  t.ok(row!.key_hash.equals(createHash('sha256').update(key).digest()), 'key_hash is the SHA-256 of the value');
  t.equal(out.prefix, row!.prefix, 'the printed prefix is the stored one');
  t.ok(key.startsWith(row!.prefix) && row!.prefix.startsWith('svc_'), 'the prefix is the start of the value');
  t.ok(row!.prefix.length <= 16, `the prefix shows only the first characters (${row!.prefix.length})`);

  const secretPart = key.slice(row!.prefix.length);
  const everything = await wholeDatabaseText();
  t.notOk(everything.includes(key), 'the value is in no row');
  t.notOk(everything.includes(secretPart), 'nor is its secret part');

  // Shown once: listing and auditing the key never print it again.
  const [listRun, audit] = await Promise.all([admin('key', 'list', merchantId), admin('key', 'audit', out.id)]);
  const listed = succeeded(t, listRun, 'key list');
  t.equal(listed.length, 1);
  t.equal(listed[0].prefix, row!.prefix);
  t.equal(audit.code, 0);
  for (const run of [listRun.stdout, audit.stdout]) t.notOk(run.includes(secretPart), 'not printed again');

  // The key works through the gateway.
  const res = await platform.client(key).get('/api/v1/affiliates');
  t.equal(res.status, 200);
  const [wildcardRun, unknownScope, noScope] = await Promise.all([
    admin('key', 'create', merchantId, '--scopes', '*'),
    admin('key', 'create', merchantId, '--scopes', 'read,admin'),
    admin('key', 'create', merchantId, '--scopes', ','),
  ]);
  const wildcard = succeeded(t, wildcardRun, 'key create with *');
  t.same(wildcard.scopes, ['*']);
  t.not(wildcard.key, key, 'every key is new');
  refused(t, unknownScope, 'unknown scope', /--scopes must be/);
  refused(t, noScope, 'no scope', /--scopes must be/);
  t.equal((await keyRows(merchantId)).length, 2, 'refused keys were not stored');
});

t.test('API keys need the growth plan or higher', async (t) => {
  const free = await newMerchant('free');
  const starter = await newMerchant('starter');
  const [onFree, onStarter, unknown] = await Promise.all([
    admin('key', 'create', free, '--scopes', 'read'),
    admin('key', 'create', starter, '--scopes', 'read,write'),
    admin('key', 'create', 'mer_00000000000000000000000000', '--scopes', 'read'),
  ]);
  refused(t, onFree, 'key create on free', /growth plan or higher/);
  refused(t, onStarter, 'key create on starter', /growth plan or higher/);
  refused(t, unknown, 'unknown merchant', /no merchant/);
  t.equal(
    (await keyRows(free)).length + (await keyRows(starter)).length,
    0,
    'no key row for the free and starter merchants',
  );

  // A merchant upgraded to growth may create keys; one downgraded afterwards keeps its keys, which get 402.
  const upgraded = succeeded(t, await admin('merchant', 'set-plan', starter, 'growth'), 'upgrade');
  t.equal(upgraded.plan, 'growth');
  const key = succeeded(t, await admin('key', 'create', starter, '--scopes', 'read'), 'key create after the upgrade');
  t.equal((await platform.client(key.key).get('/api/v1/affiliates')).status, 200);
  succeeded(t, await admin('merchant', 'set-plan', starter, 'starter'), 'downgrade');
  await sleep(1100); // key lookups (with the plan) are reused for at most one second
  const res = await platform.client(key.key).get('/api/v1/affiliates');
  t.equal(res.status, 402, 'PLAN_REQUIRED after the downgrade');
  t.equal(res.body.error.code, 'PLAN_REQUIRED');
});

t.test('--rate-limit: scale and up only, 60 to 60000', async (t) => {
  const growth = await newMerchant('growth');
  const scale = await newMerchant('scale');
  const enterprise = await newMerchant('enterprise');

  const bad = ['59', '60001', '-60', '120.5', 'abc', ''];
  const [onGrowth, ...runs] = await Promise.all([
    admin('key', 'create', growth, '--scopes', 'read', '--rate-limit', '120'),
    ...bad.map((v) => admin('key', 'create', scale, '--scopes', 'read', `--rate-limit=${v}`)),
  ]);
  refused(t, onGrowth, 'growth with --rate-limit', /scale plan or higher/);
  runs.forEach((run, i) =>
    refused(t, run, `--rate-limit ${JSON.stringify(bad[i])}`, /--rate-limit must be a whole number from 60 to 60000/),
  );
  t.equal((await keyRows(growth)).length + (await keyRows(scale)).length, 0, 'no key was stored');

  const [lowRun, highRun] = await Promise.all([
    admin('key', 'create', scale, '--scopes', 'read', '--rate-limit', '60'),
    admin('key', 'create', enterprise, '--scopes', 'read', '--rate-limit', '60000'),
  ]);
  const low = succeeded(t, lowRun, 'scale at 60');
  t.equal(low.rate_limit_per_min, 60);
  const high = succeeded(t, highRun, 'enterprise at 60000');
  t.equal(high.rate_limit_per_min, 60000);
  const stored =
    await platform.sql`select id, rate_limit_per_min from api_keys where id in ${platform.sql([low.id, high.id])} order by rate_limit_per_min`;
  t.same(
    stored.map((r) => r['rate_limit_per_min']),
    [60, 60000],
  );
  // The gateway applies it.
  const res = await platform.client(low.key).get('/api/v1/affiliates');
  t.equal(res.headers.get('ratelimit-limit'), '60');
});

t.test('revoke, update and the audit log', async (t) => {
  const merchantId = await newMerchant('scale');
  const key = succeeded(t, await admin('key', 'create', merchantId, '--scopes', 'read,write'), 'key create');
  const api = platform.client(key.key);
  t.equal(
    (await api.post('/api/v1/affiliates', { email: 'before@example.com' })).status,
    201,
    'read,write key creates',
  );

  const scoped = succeeded(t, await admin('key', 'update', key.id, '--scopes', 'read'), 'key update --scopes');
  t.same(scoped.scopes, ['read']);
  const limited = succeeded(t, await admin('key', 'update', key.id, '--rate-limit', '1200'), 'key update --rate-limit');
  t.equal(limited.rate_limit_per_min, 1200);
  await sleep(1100); // key lookups are reused for at most one second
  const forbidden = await api.post('/api/v1/affiliates', { email: 'after@example.com' });
  t.equal(forbidden.status, 403, 'the scope change reached the gateway');
  t.equal(forbidden.body.error.code, 'FORBIDDEN');
  const allowed = await api.get('/api/v1/affiliates');
  t.equal(allowed.status, 200);
  t.equal(allowed.headers.get('ratelimit-limit'), '1200', 'the rate limit change too');

  const revoked = succeeded(t, await admin('key', 'revoke', key.id), 'key revoke');
  t.equal(revoked.id, key.id);
  t.ok(revoked.revoked_at, 'revoked_at printed');
  await sleep(1100);
  const res = await api.get('/api/v1/affiliates');
  t.equal(res.status, 401, 'a revoked key is refused within a second');
  t.strictSame(res.body, {
    error: {
      code: 'UNAUTHORIZED',
      message: 'A valid API key is required: Authorization: Bearer svc_…',
      request_id: res.headers.get('x-request-id'),
    },
  });
  t.match(res.headers.get('www-authenticate'), /^Bearer/);

  const [again, updateRevoked, revokeUnknown] = await Promise.all([
    admin('key', 'revoke', key.id),
    admin('key', 'update', key.id, '--scopes', 'read,write'),
    admin('key', 'revoke', 'key_00000000000000000000000000'),
  ]);
  succeeded(t, again, 'revoking again is harmless');
  refused(t, updateRevoked, 'update of a revoked key', /is revoked/);
  refused(t, revokeUnknown, 'revoke of an unknown key', /no key/);

  const audit = await platform.sql<{ action: string; detail: unknown; merchant_id: string }[]>`
    select action, detail, merchant_id from api_key_audit where key_id = ${key.id} order by id`;
  t.same(
    audit.map((a) => ({ action: a.action, detail: a.detail, merchant_id: a.merchant_id })),
    [
      { action: 'created', detail: { scopes: ['read', 'write'], rate_limit_per_min: 600 }, merchant_id: merchantId },
      { action: 'scopes_changed', detail: { from: ['read', 'write'], to: ['read'] }, merchant_id: merchantId },
      { action: 'rate_limit_changed', detail: { from: 600, to: 1200 }, merchant_id: merchantId },
      { action: 'revoked', detail: {}, merchant_id: merchantId },
    ],
    'created, scopes_changed, rate_limit_changed, revoked: once each, in order',
  );
  const shown = succeeded(t, await admin('key', 'audit', key.id), 'key audit');
  t.same(
    shown.events.map((e: { action: string }) => e.action),
    ['revoked', 'rate_limit_changed', 'scopes_changed', 'created'],
    'newest first',
  );
  t.equal(shown.key.id, key.id);
  t.notOk(JSON.stringify(shown).includes(key.key.slice(key.prefix.length)), 'the audit never shows the value');
});

t.test('key usage is counted per day once the gateway flushes', async (t) => {
  const merchantId = await newMerchant('growth');
  const key = await createKey(platform.sql, merchantId, 'read');
  // A gateway of this test's own, so that closing it flushes the usage recorder now.
  const gatewayLog: string[] = [];
  const gateway = await startGateway(
    loadGatewayConfig(platform.env),
    createLogger({ service: 'usage-gateway' }, 'debug', (l) => gatewayLog.push(l)),
  );
  let closed = false;
  t.teardown(async () => {
    if (!closed) await gateway.close();
  });
  const api = platform.client(key.key, `http://127.0.0.1:${gateway.port}`);
  const statuses: number[] = [];
  statuses.push((await api.get('/api/v1/affiliates')).status);
  statuses.push((await api.get('/api/v1/affiliates?limit=2')).status);
  statuses.push((await api.get('/api/v1/affiliates/aff_00000000000000000000000000')).status);
  statuses.push((await api.get('/api/v1/affiliates?limit=0')).status);
  statuses.push((await api.post('/api/v1/affiliates', { email: 'x@example.com' })).status);
  t.same(statuses, [200, 200, 404, 400, 403], 'five authenticated requests');
  // Requests without a valid key belong to no key.
  t.equal(
    (await platform.client('svc_' + 'x'.repeat(43), `http://127.0.0.1:${gateway.port}`).get('/api/v1/affiliates'))
      .status,
    401,
  );
  t.equal((await platform.client(undefined, `http://127.0.0.1:${gateway.port}`).get('/api/v1/affiliates')).status, 401);

  await gateway.close();
  closed = true;
  t.same(
    gatewayLog.filter((l) => /"level":"(warn|error)"/.test(l)),
    [],
    'the gateway recorded usage without complaint',
  );
  const usage = await platform.sql<{ day: string; requests: string }[]>`
    select to_char(day, 'YYYY-MM-DD') as day, requests::text from api_key_usage_daily where key_id = ${key.id}`;
  t.same(
    usage.map((u) => ({ ...u })),
    [{ day: new Date().toISOString().slice(0, 10), requests: '5' }],
    'five requests today (UTC)',
  );
  const [row] = await platform.sql`select last_used_at from api_keys where id = ${key.id}`;
  t.ok(row!['last_used_at'], 'last_used_at set');

  const shown = succeeded(t, await admin('key', 'audit', key.id), 'key audit');
  t.equal(shown.usage.length, 1);
  t.equal(String(shown.usage[0]?.requests), '5', 'the CLI shows the usage');
});

t.test('user create stores a scrypt hash, never the password', async (t) => {
  const merchantId = await newMerchant('starter');
  const password = 'Correct-Horse-Battery-Staple-42';
  const run = await admin('user', 'create', merchantId, '--email', 'Owner@Example.com', '--password', password);
  const user = succeeded(t, run, 'user create');
  t.match(user, { id: /^usr_[0-9a-z]{26}$/, merchant_id: merchantId, email: 'Owner@Example.com' });
  t.notOk(run.stdout.includes(password), 'the password is not printed');
  t.notOk('password_hash' in user, 'nor its hash');

  const [row] = await platform.sql<
    { password_hash: string }[]
  >`select password_hash from dashboard_users where id = ${user.id}`;
  const parts = row!.password_hash.split('$');
  t.equal(parts.length, 6, 'scrypt$N$r$p$salt$hash');
  t.equal(parts[0], 'scrypt');
  const [, N, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  t.equal(Number(N), 2 ** 17, `N = ${N}: OWASP's scrypt cost`);
  const derived = await scrypt(password, Buffer.from(salt, 'base64url'), Buffer.from(hash, 'base64url').length, {
    N: Number(N),
    r: Number(r),
    p: Number(p),
    maxmem: 256 * 1024 * 1024, // 128 × N × r bytes, above Node's default of 32 MiB
  });
  t.equal(derived.toString('base64url'), hash, 'the hash is scrypt of the password with the stored salt');
  const wrong = await scrypt(password + '!', Buffer.from(salt, 'base64url'), Buffer.from(hash, 'base64url').length, {
    N: Number(N),
    r: Number(r),
    p: Number(p),
    maxmem: 256 * 1024 * 1024, // 128 × N × r bytes, above Node's default of 32 MiB
  });
  t.not(wrong.toString('base64url'), hash, 'and of nothing else');
  t.notOk((await wholeDatabaseText()).includes(password), 'the password is in no row');

  const [secondRun, duplicate, badEmail, short, ghost] = await Promise.all([
    admin('user', 'create', merchantId, '--email', 'staff@example.com', '--password', password),
    admin('user', 'create', merchantId, '--email', 'owner@example.COM', '--password', password),
    admin('user', 'create', merchantId, '--email', 'not-an-email', '--password', password),
    admin('user', 'create', merchantId, '--email', 'short@example.com', '--password', 'short'),
    admin('user', 'create', 'mer_00000000000000000000000000', '--email', 'ghost@example.com', '--password', password),
  ]);
  // Two users with one password get different salts.
  const second = succeeded(t, secondRun, 'second user');
  const [other] = await platform.sql<
    { password_hash: string }[]
  >`select password_hash from dashboard_users where id = ${second.id}`;
  t.not(other!.password_hash, row!.password_hash, 'salted');
  refused(t, duplicate, 'duplicate e-mail', /already exists/);
  refused(t, badEmail, 'bad e-mail', /--email/);
  refused(t, short, 'short password', /--password/);
  refused(t, ghost, 'unknown merchant', /no merchant/);
  t.equal(
    (await platform.sql`select 1 from dashboard_users where merchant_id = ${merchantId}`).length,
    2,
    'only the two users',
  );
});

t.test('bad arguments: non-zero exit, usage on stderr', async (t) => {
  const cases: [string, string[]][] = [
    ['no command', []],
    ['missing --name', ['merchant', 'create', '--plan', 'growth']],
    ['missing --scopes', ['key', 'create', 'mer_00000000000000000000000000']],
    ['unknown option', ['merchant', 'create', '--name', 'X', '--plan', 'growth', '--colour', 'blue']],
    ['option without its value', ['merchant', 'create', '--plan', 'growth', '--name']],
  ];
  const before = (await platform.sql`select count(*)::int as n from merchants`)[0]!['n'];
  const runs = await Promise.all(cases.map(([, args]) => admin(...args)));
  for (const [i, [what]] of cases.entries()) {
    const run = runs[i]!;
    t.equal(run.code, 2, `${what}: exit 2`);
    t.equal(run.stdout, '', `${what}: nothing on stdout`);
    t.match(run.stderr, /^admin: /, `${what}: names the program`);
    t.match(run.stderr, /usage: npm run -s admin -- <command>/, `${what}: shows the usage`);
  }
  t.equal((await platform.sql`select count(*)::int as n from merchants`)[0]!['n'], before, 'nothing was created');
});

t.test('a typo in a command is named, with where to find the commands', async (t) => {
  for (const [args, named] of [
    [['frobnicate', 'now'], 'frobnicate now'],
    [['merchant'], 'merchant'],
    [['merchnt', 'create', '--name', 'X'], 'merchnt create'],
  ] as const) {
    const run = await admin(...args);
    t.equal(run.code, 2, `${named}: exit 2`);
    t.equal(run.stdout, '');
    t.equal(run.stderr, `admin: unknown command "${named}": \`npm run -s admin -- --help\` lists the commands\n`);
  }
});

t.test('--help, -h and help print the commands on stdout and exit 0', async (t) => {
  for (const args of [['--help'], ['-h'], ['help'], ['key', 'create', '--help']]) {
    const run = await admin(...args);
    t.equal(run.code, 0, `${args.join(' ')}: exit 0`);
    t.equal(run.stderr, '', `${args.join(' ')}: nothing on stderr`);
    t.match(run.stdout, /^usage: npm run -s admin -- <command>/, `${args.join(' ')}: the usage on stdout`);
    for (const command of ['merchant create', 'key revoke', 'webhook replay-range', 'secrets re-encrypt'])
      t.match(run.stdout, `  ${command} `);
  }
});
