import type { Sql } from '@platform/shared/db';

/** Requests counted per key since the last flush (a type, not an interface: sql.json takes it as a JSON object). */
export type KeyRequests = {
  key_id: string;
  requests: number;
};

/** Adds the counts to today's (UTC) row of each key in the usage log. */
export const addDailyUsage = (sql: Sql, rows: KeyRequests[]) => sql`
  insert into api_key_usage_daily (key_id, day, requests)
  select key_id, (now() at time zone 'utc')::date, requests
  from jsonb_to_recordset(${sql.json(rows)}) as r(key_id text, requests bigint)
  on conflict (key_id, day) do update set requests = api_key_usage_daily.requests + excluded.requests`;

/** Marks each key used now. */
export const touchKeys = (sql: Sql, rows: KeyRequests[]) => sql`
  update api_keys k set last_used_at = now()
  from jsonb_to_recordset(${sql.json(rows)}) as r(key_id text, requests bigint)
  where k.id = r.key_id`;
