import { randomBytes, scrypt as scryptCb } from 'node:crypto';
import { promisify } from 'node:util';
import { hashApiKey } from '@platform/shared/crypto';
import type { Sql } from '@platform/shared/db';
import { isId, newId } from '@platform/shared/ids';

const scrypt = promisify(scryptCb) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;

export const PLANS = ['free', 'starter', 'growth', 'scale', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];
const API_PLANS: Plan[] = ['growth', 'scale', 'enterprise'];
const CUSTOM_RATE_PLANS: Plan[] = ['scale', 'enterprise'];
const SCOPES = ['read', 'write', '*'];

/** An operator mistake: printed on stderr, exit 2 (a failure of the command itself exits 1). */
export class UsageError extends Error {}

export async function createMerchant(sql: Sql, name: string, plan: string) {
  if (!name.trim()) throw new UsageError('--name must not be empty');
  assertPlan(plan);
  const [row] = await sql`
    insert into merchants (id, name, plan) values (${newId('mer')}, ${name}, ${plan})
    returning id, name, plan, settings, created_at`;
  return row;
}

export async function setPlan(sql: Sql, merchantId: string, plan: string) {
  assertPlan(plan);
  const [row] = await sql`
    update merchants set plan = ${plan}, updated_at = date_trunc('milliseconds', now())
    where id = ${merchantId} returning id, name, plan, settings, created_at, updated_at`;
  if (!row) throw new UsageError(`no merchant ${merchantId}`);
  return row;
}

export async function showMerchant(sql: Sql, merchantId: string) {
  const [row] = await sql`select id, name, plan, settings, created_at, updated_at from merchants where id = ${merchantId}`;
  if (!row) throw new UsageError(`no merchant ${merchantId}`);
  return row;
}

/** Prints the key value once; only its hash and a display prefix are stored. */
export async function createKey(sql: Sql, merchantId: string, scopesArg: string, rateLimit?: number) {
  const scopes = parseScopes(scopesArg);
  return sql.begin(async (tx) => {
    const [merchant] = await tx<{ plan: Plan }[]>`select plan from merchants where id = ${merchantId} for share`;
    if (!merchant) throw new UsageError(`no merchant ${merchantId}`);
    if (!API_PLANS.includes(merchant.plan)) throw new UsageError(`API keys need the growth plan or higher; ${merchantId} is on ${merchant.plan}`);
    const limit = checkRateLimit(merchant.plan, rateLimit);
    const id = newId('key');
    const value = `svc_${randomBytes(32).toString('base64url')}`;
    const prefix = value.slice(0, 12);
    await tx`
      insert into api_keys (id, merchant_id, key_hash, prefix, scopes, rate_limit_per_min)
      values (${id}, ${merchantId}, ${hashApiKey(value)}, ${prefix}, ${scopes}, ${limit})`;
    await tx`insert into api_key_audit (key_id, merchant_id, action, detail)
      values (${id}, ${merchantId}, 'created', ${tx.json({ scopes, rate_limit_per_min: limit })})`;
    return { id, merchant_id: merchantId, key: value, prefix, scopes, rate_limit_per_min: limit };
  });
}

export async function updateKey(sql: Sql, keyId: string, changes: { scopes?: string; rateLimit?: number }) {
  if (changes.scopes === undefined && changes.rateLimit === undefined) throw new UsageError('give --scopes and/or --rate-limit');
  return sql.begin(async (tx) => {
    const [key] = await tx<{ merchant_id: string; scopes: string[]; rate_limit_per_min: number; revoked_at: Date | null; plan: Plan }[]>`
      select k.merchant_id, k.scopes, k.rate_limit_per_min, k.revoked_at, m.plan
      from api_keys k join merchants m on m.id = k.merchant_id where k.id = ${keyId} for update of k`;
    if (!key) throw new UsageError(`no key ${keyId}`);
    if (key.revoked_at) throw new UsageError(`key ${keyId} is revoked`);
    if (changes.scopes !== undefined) {
      const scopes = parseScopes(changes.scopes);
      await tx`update api_keys set scopes = ${scopes} where id = ${keyId}`;
      await tx`insert into api_key_audit (key_id, merchant_id, action, detail)
        values (${keyId}, ${key.merchant_id}, 'scopes_changed', ${tx.json({ from: key.scopes, to: scopes })})`;
    }
    if (changes.rateLimit !== undefined) {
      const limit = checkRateLimit(key.plan, changes.rateLimit);
      await tx`update api_keys set rate_limit_per_min = ${limit} where id = ${keyId}`;
      await tx`insert into api_key_audit (key_id, merchant_id, action, detail)
        values (${keyId}, ${key.merchant_id}, 'rate_limit_changed', ${tx.json({ from: key.rate_limit_per_min, to: limit })})`;
    }
    return describeKey(tx as unknown as Sql, keyId);
  });
}

export async function revokeKey(sql: Sql, keyId: string) {
  return sql.begin(async (tx) => {
    const [key] = await tx<{ merchant_id: string; revoked_at: Date | null }[]>`
      select merchant_id, revoked_at from api_keys where id = ${keyId} for update`;
    if (!key) throw new UsageError(`no key ${keyId}`);
    if (!key.revoked_at) {
      await tx`update api_keys set revoked_at = now() where id = ${keyId}`;
      await tx`insert into api_key_audit (key_id, merchant_id, action) values (${keyId}, ${key.merchant_id}, 'revoked')`;
    }
    return describeKey(tx as unknown as Sql, keyId);
  });
}

export async function listKeys(sql: Sql, merchantId: string) {
  const keys = await sql`
    select id, prefix, scopes, rate_limit_per_min, created_at, revoked_at, last_used_at
    from api_keys where merchant_id = ${merchantId} order by created_at desc`;
  return keys;
}

export async function keyAudit(sql: Sql, keyId: string) {
  const events = await sql`select action, detail, at from api_key_audit where key_id = ${keyId} order by at desc, id desc`;
  const usage = await sql`select day, requests from api_key_usage_daily where key_id = ${keyId} order by day desc limit 90`;
  return { key: await describeKey(sql, keyId), events, usage };
}

async function describeKey(sql: Sql, keyId: string) {
  const [row] = await sql`
    select id, merchant_id, prefix, scopes, rate_limit_per_min, created_at, revoked_at, last_used_at
    from api_keys where id = ${keyId}`;
  if (!row) throw new UsageError(`no key ${keyId}`);
  return row;
}

export async function createUser(sql: Sql, merchantId: string, email: string, password: string) {
  if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) throw new UsageError('--email must be an e-mail address');
  if (password.length < 10) throw new UsageError('--password must have at least 10 characters');
  if (!isId('mer', merchantId)) throw new UsageError(`no merchant ${merchantId}`);
  const [merchant] = await sql`select 1 from merchants where id = ${merchantId}`;
  if (!merchant) throw new UsageError(`no merchant ${merchantId}`);
  const salt = randomBytes(16);
  const N = 16384, r = 8, p = 1;
  const hash = await scrypt(password, salt, 32, { N, r, p });
  const passwordHash = ['scrypt', N, r, p, salt.toString('base64url'), hash.toString('base64url')].join('$');
  try {
    const [row] = await sql`
      insert into dashboard_users (id, merchant_id, email, password_hash)
      values (${newId('usr')}, ${merchantId}, ${email}, ${passwordHash})
      returning id, merchant_id, email, created_at`;
    return row;
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw new UsageError(`a user with e-mail ${email} already exists`);
    throw err;
  }
}

function assertPlan(plan: string): asserts plan is Plan {
  if (!(PLANS as readonly string[]).includes(plan)) throw new UsageError(`plan must be one of ${PLANS.join(', ')}`);
}

function parseScopes(arg: string): string[] {
  const scopes = [...new Set(arg.split(',').map((s) => s.trim()).filter(Boolean))];
  if (scopes.length === 0 || scopes.some((s) => !SCOPES.includes(s))) throw new UsageError(`--scopes must be a comma-separated set of ${SCOPES.join(', ')}`);
  return scopes;
}

function checkRateLimit(plan: Plan, rateLimit: number | undefined): number {
  if (rateLimit === undefined) return 600;
  if (!CUSTOM_RATE_PLANS.includes(plan)) throw new UsageError(`--rate-limit needs the scale plan or higher; the merchant is on ${plan}`);
  if (!Number.isInteger(rateLimit) || rateLimit < 60 || rateLimit > 60000) throw new UsageError('--rate-limit must be a whole number from 60 to 60000');
  return rateLimit;
}
