import { randomBytes } from 'node:crypto';
import { hashApiKey } from './crypto.ts';
import type { Sql } from './db.ts';
import { ApiError } from './errors.ts';
import { newId } from './ids.ts';

/**
 * API key management, shared by the operator CLI and the dashboard so that both check the same rules and write the
 * same audit log: keys on growth and up, per-key rate limits on scale and up, the value returned once
 * and only its hash stored. `actor` names who made the change: the dashboard user's e-mail, or 'operator'.
 */
export const PLANS = ['free', 'starter', 'growth', 'scale', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];
export const API_KEY_PLANS: readonly Plan[] = ['growth', 'scale', 'enterprise'];
export const CUSTOM_RATE_PLANS: readonly Plan[] = ['scale', 'enterprise'];
export const KEY_SCOPES = ['read', 'write', '*'] as const;
export const DEFAULT_RATE_LIMIT = 600;

export interface CreatedKey {
  id: string;
  merchant_id: string;
  key: string;
  prefix: string;
  scopes: string[];
  rate_limit_per_min: number;
}

export async function createApiKey(
  sql: Sql,
  merchantId: string,
  scopes: string[],
  rateLimit: number | undefined,
  actor: string,
): Promise<CreatedKey> {
  return sql.begin(async (tx) => {
    const [merchant] = await tx<{ plan: Plan }[]>`select plan from merchants where id = ${merchantId} for share`;
    if (!merchant) throw new ApiError('NOT_FOUND', `No such merchant ${merchantId}`);
    if (!API_KEY_PLANS.includes(merchant.plan)) {
      throw new ApiError(
        'PLAN_REQUIRED',
        `API keys need the growth plan or higher; ${merchantId} is on ${merchant.plan}`,
      );
    }
    const limit = checkRateLimit(merchant.plan, rateLimit);
    const id = newId('key');
    const value = `svc_${randomBytes(32).toString('base64url')}`;
    const prefix = value.slice(0, 12);
    await tx`
      insert into api_keys (id, merchant_id, key_hash, prefix, scopes, rate_limit_per_min)
      values (${id}, ${merchantId}, ${hashApiKey(value)}, ${prefix}, ${scopes}, ${limit})`;
    await tx`insert into api_key_audit (key_id, merchant_id, action, detail, actor)
      values (${id}, ${merchantId}, 'created', ${tx.json({ scopes, rate_limit_per_min: limit })}, ${actor})`;
    return { id, merchant_id: merchantId, key: value, prefix, scopes, rate_limit_per_min: limit };
  });
}

/**
 * Revokes a key (once: a second revocation changes nothing and writes nothing). `merchantId` scopes the lookup for
 * the dashboard; the CLI, acting for the operator, passes null.
 */
export async function revokeApiKey(sql: Sql, keyId: string, merchantId: string | null, actor: string): Promise<void> {
  await sql.begin(async (tx) => {
    const [key] = await tx<{ merchant_id: string; revoked_at: Date | null }[]>`
      select merchant_id, revoked_at from api_keys
      where id = ${keyId} and (${merchantId}::text is null or merchant_id = ${merchantId}) for update`;
    if (!key) throw new ApiError('NOT_FOUND', `No such key ${keyId}`);
    if (key.revoked_at) return;
    await tx`update api_keys set revoked_at = now() where id = ${keyId}`;
    await tx`insert into api_key_audit (key_id, merchant_id, action, actor) values (${keyId}, ${key.merchant_id}, 'revoked', ${actor})`;
  });
}

/** Changes a live key's scopes and/or rate limit, one audit row per change. */
export async function updateApiKey(
  sql: Sql,
  keyId: string,
  merchantId: string | null,
  changes: { scopes?: string[]; rateLimit?: number },
  actor: string,
): Promise<void> {
  await sql.begin(async (tx) => {
    const [key] = await tx<
      { merchant_id: string; scopes: string[]; rate_limit_per_min: number; revoked_at: Date | null; plan: Plan }[]
    >`
      select k.merchant_id, k.scopes, k.rate_limit_per_min, k.revoked_at, m.plan
      from api_keys k join merchants m on m.id = k.merchant_id
      where k.id = ${keyId} and (${merchantId}::text is null or k.merchant_id = ${merchantId}) for update of k`;
    if (!key) throw new ApiError('NOT_FOUND', `No such key ${keyId}`);
    if (key.revoked_at) throw new ApiError('CONFLICT', `Key ${keyId} is revoked`);
    if (changes.scopes !== undefined) {
      await tx`update api_keys set scopes = ${changes.scopes} where id = ${keyId}`;
      await tx`insert into api_key_audit (key_id, merchant_id, action, detail, actor)
        values (${keyId}, ${key.merchant_id}, 'scopes_changed', ${tx.json({ from: key.scopes, to: changes.scopes })}, ${actor})`;
    }
    if (changes.rateLimit !== undefined) {
      const limit = checkRateLimit(key.plan, changes.rateLimit);
      await tx`update api_keys set rate_limit_per_min = ${limit} where id = ${keyId}`;
      await tx`insert into api_key_audit (key_id, merchant_id, action, detail, actor)
        values (${keyId}, ${key.merchant_id}, 'rate_limit_changed', ${tx.json({ from: key.rate_limit_per_min, to: limit })}, ${actor})`;
    }
  });
}

/**
 * A merchant's plan change, with what follows for its keys: below scale, custom rate limits are not part of the plan,
 * so every live key with one goes back to DEFAULT_RATE_LIMIT, each change in the key's audit log. Answers the
 * merchant, or undefined when there is none.
 */
export async function changePlan(
  sql: Sql,
  merchantId: string,
  plan: Plan,
  actor: string,
): Promise<Record<string, unknown> | undefined> {
  return sql.begin(async (tx) => {
    const [merchant] = await tx`
      update merchants set plan = ${plan}, updated_at = date_trunc('milliseconds', now())
      where id = ${merchantId} returning id, name, plan, settings, created_at, updated_at`;
    if (!merchant || CUSTOM_RATE_PLANS.includes(plan)) return merchant;
    const reset = await tx<{ id: string; from: number }[]>`
      update api_keys k set rate_limit_per_min = ${DEFAULT_RATE_LIMIT}
      from (select id, rate_limit_per_min from api_keys
            where merchant_id = ${merchantId} and revoked_at is null and rate_limit_per_min <> ${DEFAULT_RATE_LIMIT}
            for update) old
      where k.id = old.id
      returning k.id, old.rate_limit_per_min as from`;
    for (const key of reset) {
      await tx`insert into api_key_audit (key_id, merchant_id, action, detail, actor)
        values (${key.id}, ${merchantId}, 'rate_limit_changed', ${tx.json({ from: key.from, to: DEFAULT_RATE_LIMIT, reason: `plan ${plan}` })}, ${actor})`;
    }
    return merchant;
  });
}

function checkRateLimit(plan: Plan, rateLimit: number | undefined): number {
  if (rateLimit === undefined) return DEFAULT_RATE_LIMIT;
  if (!CUSTOM_RATE_PLANS.includes(plan))
    throw new ApiError(
      'PLAN_REQUIRED',
      `A custom rate limit needs the scale plan or higher; the merchant is on ${plan}`,
    );
  if (!Number.isInteger(rateLimit) || rateLimit < 60 || rateLimit > 60000) {
    throw new ApiError('INVALID_INPUT', 'The request is invalid', [
      { path: 'rate_limit_per_min', message: 'must be a whole number from 60 to 60000' },
    ]);
  }
  return rateLimit;
}
