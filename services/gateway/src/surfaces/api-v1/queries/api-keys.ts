import type { Sql } from '@platform/shared/db';

/** An API key with its merchant's plan, as the bearer check reads it. */
export interface BearerKeyRow {
  id: string;
  merchant_id: string;
  scopes: string[];
  rate_limit_per_min: number;
  revoked: boolean;
  plan: string;
}

/** The key of this hash, revoked or not (a statement not yet sent: the caller runs it in its span). */
export const keyByHash = (sql: Sql, keyHash: Buffer) => sql<BearerKeyRow[]>`
  select k.id, k.merchant_id, k.scopes, k.rate_limit_per_min, k.revoked_at is not null as revoked, m.plan
  from api_keys k join merchants m on m.id = k.merchant_id
  where k.key_hash = ${keyHash}`;
