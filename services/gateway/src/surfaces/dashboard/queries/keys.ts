import type { Sql } from '@platform/shared/db';

/** The dashboard's reads of a merchant's API keys (the writes are shared/src/api-keys.ts, the CLI's too). */
export interface KeyRow {
  id: string;
  prefix: string;
  scopes: string[];
  rate_limit_per_min: number;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

/** The merchant's keys, newest first. */
export const listKeys = (sql: Sql, merchantId: string) => sql<KeyRow[]>`
  select id, prefix, scopes, rate_limit_per_min, created_at, revoked_at, last_used_at
  from api_keys where merchant_id = ${merchantId} order by created_at desc, id desc limit 500`;

/** One of the merchant's keys; another merchant's is not found. */
export async function findKey(sql: Sql, merchantId: string, keyId: string): Promise<KeyRow | undefined> {
  const [row] = await sql<KeyRow[]>`
    select id, prefix, scopes, rate_limit_per_min, created_at, revoked_at, last_used_at
    from api_keys where id = ${keyId} and merchant_id = ${merchantId}`;
  return row;
}

/** The key's audit log, newest first. */
export const keyAuditEvents = (sql: Sql, merchantId: string, keyId: string) => sql<
  { action: string; actor: string | null; detail: Record<string, unknown>; at: Date }[]
>`
  select action, actor, detail, at from api_key_audit
  where key_id = ${keyId} and merchant_id = ${merchantId} order by at desc, id desc limit 200`;

/** The key's requests per UTC day over the last 30 days, a row for each day (0 when unused). */
export const keyDailyUsage = (sql: Sql, merchantId: string, keyId: string) => sql<{ day: string; requests: string }[]>`
  select d::date::text as day, coalesce(u.requests, 0) as requests
  from generate_series((now() at time zone 'utc')::date - 29, (now() at time zone 'utc')::date, interval '1 day') d
  left join api_key_usage_daily u
    on u.key_id = ${keyId} and u.day = d::date
    and u.day between (now() at time zone 'utc')::date - 29 and (now() at time zone 'utc')::date
    and exists (select 1 from api_keys k where k.id = ${keyId} and k.merchant_id = ${merchantId})
  order by d`;
