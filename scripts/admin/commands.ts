import {
  changePlan,
  createApiKey,
  KEY_SCOPES,
  PLANS,
  revokeApiKey,
  updateApiKey,
  type Plan,
} from '@platform/shared/api-keys';
import type { Sql } from '@platform/shared/db';
import type { Row } from 'postgres';
import { ApiError } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { insertDashboardUser, insertMerchant } from '@platform/shared/merchants';
import { hashPassword, PASSWORD_COST } from '@platform/shared/passwords';

export { PLANS, type Plan } from '@platform/shared/api-keys';
const SCOPES: readonly string[] = KEY_SCOPES;
/** The acting user of the operator's key changes in the audit log (the dashboard writes the user's e-mail). */
const OPERATOR = 'operator';

/** An operator mistake: printed on stderr, exit 2 (a failure of the command itself exits 1). */
export class UsageError extends Error {}

/** The row as the CLI prints it (typed loosely, as postgres.js rows are, for the callers that index it). */
export async function createMerchant(sql: Sql, name: string, plan: string): Promise<Row | undefined> {
  if (!name.trim()) throw new UsageError('--name must not be empty');
  assertPlan(plan);
  return insertMerchant(sql, name, plan);
}

/** Below scale, the merchant's keys lose their custom rate limits (changePlan; audited). */
export async function setPlan(sql: Sql, merchantId: string, plan: string) {
  assertPlan(plan);
  const row = await changePlan(sql, merchantId, plan, OPERATOR);
  if (!row) throw new UsageError(`no merchant ${merchantId}`);
  return row;
}

export async function showMerchant(sql: Sql, merchantId: string) {
  const [row] =
    await sql`select id, name, plan, settings, created_at, updated_at from merchants where id = ${merchantId}`;
  if (!row) throw new UsageError(`no merchant ${merchantId}`);
  return row;
}

/** Prints the key value once; only its hash and a display prefix are stored (shared/src/api-keys.ts). */
export async function createKey(sql: Sql, merchantId: string, scopesArg: string, rateLimit?: number) {
  return asUsage(createApiKey(sql, merchantId, parseScopes(scopesArg), rateLimit, OPERATOR));
}

export async function updateKey(sql: Sql, keyId: string, changes: { scopes?: string; rateLimit?: number }) {
  if (changes.scopes === undefined && changes.rateLimit === undefined)
    throw new UsageError('give --scopes and/or --rate-limit');
  const scopes = changes.scopes === undefined ? undefined : parseScopes(changes.scopes);
  await asUsage(updateApiKey(sql, keyId, null, { scopes, rateLimit: changes.rateLimit }, OPERATOR));
  return describeKey(sql, keyId);
}

export async function revokeKey(sql: Sql, keyId: string) {
  await asUsage(revokeApiKey(sql, keyId, null, OPERATOR));
  return describeKey(sql, keyId);
}

export async function listKeys(sql: Sql, merchantId: string) {
  const keys = await sql`
    select id, prefix, scopes, rate_limit_per_min, created_at, revoked_at, last_used_at
    from api_keys where merchant_id = ${merchantId} order by created_at desc`;
  return keys;
}

export async function keyAudit(sql: Sql, keyId: string) {
  const events =
    await sql`select action, detail, actor, at from api_key_audit where key_id = ${keyId} order by at desc, id desc`;
  const usage =
    await sql`select day, requests from api_key_usage_daily where key_id = ${keyId} order by day desc limit 90`;
  return { key: await describeKey(sql, keyId), events, usage };
}

async function describeKey(sql: Sql, keyId: string) {
  const [row] = await sql`
    select id, merchant_id, prefix, scopes, rate_limit_per_min, created_at, revoked_at, last_used_at
    from api_keys where id = ${keyId}`;
  if (!row) throw new UsageError(`no key ${keyId}`);
  return row;
}

/** A dashboard user; `passwordCost` (log2 of scrypt's N) is lowered only by the test suite (see shared/src/passwords.ts). */
export async function createUser(
  sql: Sql,
  merchantId: string,
  email: string,
  password: string,
  passwordCost = PASSWORD_COST,
): Promise<Row | undefined> {
  if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) throw new UsageError('--email must be an e-mail address');
  if (password.length < 10) throw new UsageError('--password must have at least 10 characters');
  if (!isId('mer', merchantId)) throw new UsageError(`no merchant ${String(merchantId)}`);
  const [merchant] = await sql`select 1 from merchants where id = ${merchantId}`;
  if (!merchant) throw new UsageError(`no merchant ${merchantId}`);
  const passwordHash = await hashPassword(password, passwordCost);
  try {
    // Made by the operator: the address is taken as verified.
    return await insertDashboardUser(sql, { merchantId, email, passwordHash, verified: true });
  } catch (err) {
    if ((err as { code?: string }).code === '23505')
      throw new UsageError(`a user with e-mail ${email} already exists`, { cause: err });
    throw err;
  }
}

function assertPlan(plan: string): asserts plan is Plan {
  if (!(PLANS as readonly string[]).includes(plan)) throw new UsageError(`plan must be one of ${PLANS.join(', ')}`);
}

function parseScopes(arg: string): string[] {
  const scopes = [
    ...new Set(
      arg
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  if (scopes.length === 0 || scopes.some((s) => !SCOPES.includes(s)))
    throw new UsageError(`--scopes must be a comma-separated set of ${SCOPES.join(', ')}`);
  return scopes;
}

/** The shared key rules answer in the API's terms; the operator reads them as usage errors naming the flags. */
async function asUsage<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const detail = err.details?.[0];
    if (detail?.path === 'rate_limit_per_min') throw new UsageError(`--rate-limit ${detail.message}`, { cause: err });
    if (err.code === 'NOT_FOUND') throw new UsageError(err.message.replace(/^No such/, 'no'), { cause: err });
    throw new UsageError(err.code === 'CONFLICT' ? err.message.replace(/^Key/, 'key') : err.message, {
      cause: err,
    });
  }
}
