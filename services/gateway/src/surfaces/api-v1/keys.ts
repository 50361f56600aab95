import type { Role } from '../../http/accounts/permissions.ts';
import { hashApiKey } from '@platform/shared/crypto';
import type { Sql } from '@platform/shared/db';
import { inDatabaseSpan } from '@platform/shared/tracing/db';
import { keyByHash } from './queries/api-keys.ts';

export interface KeyRecord {
  keyId: string;
  merchantId: string;
  scopes: string[];
  rateLimitPerMin: number;
  plan: string;
  revoked: boolean;
  /** Set when the caller is a dashboard session (keyId is then its user's): what the user's role allows decides. */
  role?: Role;
}

const KEY_SHAPE = /^svc_[A-Za-z0-9_-]{32,128}$/;
const MAX_ENTRIES = 50_000;

/**
 * Resolves bearer keys to their key and merchant, by hash. Answers (found or not) are reused for `ttlMs` at most,
 * so a revocation or a plan change made by any process reaches every gateway replica within that time without
 * any message between them.
 */
export function createKeyResolver(sql: Sql, ttlMs: number) {
  const cache = new Map<string, { record: KeyRecord | null; expires: number }>();

  return async function resolve(value: string): Promise<KeyRecord | null> {
    if (!KEY_SHAPE.test(value)) return null;
    const hash = hashApiKey(value);
    const cacheKey = hash.toString('base64');
    const now = Date.now();
    const hit = cache.get(cacheKey);
    if (hit && hit.expires > now) return hit.record;
    const [row] = await inDatabaseSpan('select api_keys', () => keyByHash(sql, hash).execute());
    const record: KeyRecord | null = row
      ? {
          keyId: row.id,
          merchantId: row.merchant_id,
          scopes: row.scopes,
          rateLimitPerMin: row.rate_limit_per_min,
          plan: row.plan,
          revoked: row.revoked,
        }
      : null;
    if (ttlMs > 0) {
      if (cache.size >= MAX_ENTRIES) cache.clear();
      cache.set(cacheKey, { record, expires: now + ttlMs });
    }
    return record;
  };
}
