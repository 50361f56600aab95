import type { Sql } from '@platform/shared/db';

/** A platform key as the resolver reads it. */
export interface PlatformKeyRow {
  id: string;
  livemode: boolean;
  rate_limit_per_min: number;
}

/** The unrevoked platform key of this hash, if any. */
export async function activePlatformKey(sql: Sql, keyHash: Buffer): Promise<PlatformKeyRow | undefined> {
  const [row] = await sql<PlatformKeyRow[]>`
    select id, livemode, rate_limit_per_min from platform_keys where key_hash = ${keyHash} and revoked_at is null`;
  return row;
}
