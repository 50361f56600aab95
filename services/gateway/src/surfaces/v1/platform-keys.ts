import { hashApiKey } from '@platform/shared/crypto';
import type { Sql } from '@platform/shared/db';
import { activePlatformKey } from './queries/platform-keys.ts';

export interface PlatformKeyRecord {
  keyId: string;
  livemode: boolean;
  rateLimitPerMin: number;
}

/** sk_test_… or sk_live_…: the mode, then 32 or more characters of randomness (see scripts/admin/platform-keys.ts). */
export const PLATFORM_KEY_SHAPE = /^sk_(test|live)_[A-Za-z0-9_-]{32,128}$/;
const MAX_ENTRIES = 10_000;

/**
 * Resolves platform keys by hash, like api-v1/keys.ts does for merchants' svc_ keys: answers (found or not, revoked or
 * not) are reused for `ttlMs` at most, so a revocation reaches every gateway replica within that time.
 */
export function createPlatformKeyResolver(sql: Sql, ttlMs: number) {
  const cache = new Map<string, { record: PlatformKeyRecord | null; expires: number }>();
  return async function resolve(value: string): Promise<PlatformKeyRecord | null> {
    if (!PLATFORM_KEY_SHAPE.test(value)) return null;
    const hash = hashApiKey(value);
    const cacheKey = hash.toString('base64');
    const now = Date.now();
    const hit = cache.get(cacheKey);
    if (hit && hit.expires > now) return hit.record;
    const row = await activePlatformKey(sql, hash);
    // The value's own prefix must agree with the stored mode (it always does for keys this platform made).
    const record =
      row && row.livemode === value.startsWith('sk_live_')
        ? { keyId: row.id, livemode: row.livemode, rateLimitPerMin: row.rate_limit_per_min }
        : null;
    if (ttlMs > 0) {
      if (cache.size >= MAX_ENTRIES) cache.clear();
      cache.set(cacheKey, { record, expires: now + ttlMs });
    }
    return record;
  };
}
