import { randomBytes } from 'node:crypto';
import { hashApiKey } from '@platform/shared/crypto';
import type { Sql } from '@platform/shared/db';
import { isId, newId } from '@platform/shared/ids';
import { UsageError } from './commands.ts';

/**
 * Platform keys for the payment API (/v1): `sk_test_…` or `sk_live_…` + 32 random bytes (base64url). Like svc_ keys
 * only the hash is stored and the value is printed once; each creation and revocation is in platform_key_audit.
 * Test keys see test data only and live keys live data only.
 */
export const PLATFORM_KEY_USAGE = `  platform-key create --mode test|live [--rate-limit N]   a payment API key (sk_test_…/sk_live_…), printed once
  platform-key revoke <key_id>
  platform-key list`;

const OPERATOR = 'operator';

export async function createPlatformKey(sql: Sql, mode: string | undefined, rateLimit?: number) {
  if (mode !== 'test' && mode !== 'live') throw new UsageError('--mode must be test or live');
  if (rateLimit !== undefined && !(Number.isInteger(rateLimit) && rateLimit >= 60 && rateLimit <= 60_000))
    throw new UsageError('--rate-limit must be a whole number from 60 to 60000');
  const livemode = mode === 'live';
  const id = newId('pkey');
  const value = `sk_${mode}_${randomBytes(32).toString('base64url')}`;
  const prefix = value.slice(0, 12);
  const limit = rateLimit ?? 600;
  await sql.begin(async (tx) => {
    await tx`insert into platform_keys (id, livemode, key_hash, prefix, rate_limit_per_min)
      values (${id}, ${livemode}, ${hashApiKey(value)}, ${prefix}, ${limit})`;
    await tx`insert into platform_key_audit (key_id, action, detail, actor)
      values (${id}, 'created', ${tx.json({ livemode, rate_limit_per_min: limit })}, ${OPERATOR})`;
  });
  return { id, key: value, prefix, livemode, rate_limit_per_min: limit };
}

/** Revokes once (again changes nothing); every gateway refuses the key within KEY_CACHE_MS. */
export async function revokePlatformKey(sql: Sql, keyId: string) {
  const named = keyId;
  if (!isId('pkey', keyId)) throw new UsageError(`no platform key ${named}`);
  return sql.begin(async (tx) => {
    const [key] = await tx<{ revoked_at: Date | null }[]>`
      select revoked_at from platform_keys where id = ${keyId} for update`;
    if (!key) throw new UsageError(`no platform key ${keyId}`);
    if (!key.revoked_at) {
      await tx`update platform_keys set revoked_at = now() where id = ${keyId}`;
      await tx`insert into platform_key_audit (key_id, action, actor) values (${keyId}, 'revoked', ${OPERATOR})`;
    }
    const [row] = await tx`select id, prefix, livemode, revoked_at from platform_keys where id = ${keyId}`;
    return row;
  });
}

export function listPlatformKeys(sql: Sql) {
  return sql`
    select id, prefix, livemode, rate_limit_per_min, created_at, revoked_at from platform_keys
    order by created_at desc, id desc`;
}
