import { randomBytes } from 'node:crypto';
import { hashApiKey } from './crypto.ts';
import type { Queryable, Sql } from './db.ts';
import { ApiError } from './errors.ts';
import { newId } from './ids.ts';
import {
  allowsApiKeys,
  allowsCustomRateLimits,
  DEFAULT_RATE_LIMIT,
  lowestPlanAllowing,
  planTerms,
  type Plan,
} from './plans.ts';

/**
 * API key management, shared by the operator CLI and the dashboard so that both check the same rules and write the
 * same audit log: keys and per-key rate limits on the plans that allow them (the catalogue, plans.ts), the value
 * returned once and only its hash stored. `actor` names who made the change: the dashboard user's e-mail, or 'operator'.
 */
export { PLANS, type Plan } from './plans.ts';
export const KEY_SCOPES = ['read', 'write', '*'] as const;

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
    if (!allowsApiKeys(merchant.plan)) {
      throw new ApiError(
        'PLAN_REQUIRED',
        `API keys need the ${lowestPlanAllowing('api_keys').id} plan or higher; ${merchantId} is on ${merchant.plan}`,
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
  return sql.begin((tx) => changePlanIn(tx, merchantId, plan, actor));
}

/** changePlan inside a transaction of the caller's, for a plan change that commits with something else (a charge). */
export async function changePlanIn(
  tx: Queryable,
  merchantId: string,
  plan: Plan,
  actor: string,
): Promise<Record<string, unknown> | undefined> {
  const [merchant] = await tx`
    update merchants set plan = ${plan}, updated_at = date_trunc('milliseconds', now())
    where id = ${merchantId} returning id, name, plan, settings, created_at, updated_at`;
  if (!merchant || allowsCustomRateLimits(plan)) return merchant;
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
}

function checkRateLimit(plan: Plan, rateLimit: number | undefined): number {
  if (rateLimit === undefined) return DEFAULT_RATE_LIMIT;
  if (!allowsCustomRateLimits(plan))
    throw new ApiError(
      'PLAN_REQUIRED',
      `A custom rate limit needs the ${lowestPlanAllowing('custom_rate_limits').id} plan or higher; the merchant is on ${plan}`,
    );
  const max = planTerms(plan).limits.rate_limit_per_min!.max;
  if (!Number.isInteger(rateLimit) || rateLimit < 60 || rateLimit > max) {
    throw new ApiError('INVALID_INPUT', 'The request is invalid', [
      { path: 'rate_limit_per_min', message: `must be a whole number from 60 to ${max}` },
    ]);
  }
  return rateLimit;
}
