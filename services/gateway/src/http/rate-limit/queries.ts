import type { Sql } from '@platform/shared/db';

/** A key's window as it stands: its count and the milliseconds until it closes. */
export interface WindowRow {
  count: number;
  reset_ms: number;
}

/** The key's open window, if any, taking nothing from it. */
export async function openWindow(sql: Sql, keyId: string): Promise<WindowRow | undefined> {
  const [row] = await sql<WindowRow[]>`
    select count, (extract(epoch from (window_start + interval '1 minute' - clock_timestamp())) * 1000)::float8 as reset_ms
    from api_rate_windows where key_id = ${keyId} and window_start > clock_timestamp() - interval '1 minute'`;
  return row;
}

/**
 * Adds `counts[i]` requests to the window of `keyIds[i]`, every key in one upsert (keys in order, so that two
 * batches lock their rows in one order), opening a new window where the last one has closed; answers each key's
 * count after the batch.
 */
export const countRequests = (sql: Sql, keyIds: string[], counts: number[]) => sql<(WindowRow & { key_id: string })[]>`
  insert into api_rate_windows as w (key_id, window_start, count)
  select key_id, clock_timestamp(), n
  from unnest(${keyIds}::text[], ${counts}::int[]) as batch(key_id, n)
  order by key_id
  on conflict (key_id) do update set
    window_start = case when w.window_start <= clock_timestamp() - interval '1 minute' then clock_timestamp() else w.window_start end,
    count = case when w.window_start <= clock_timestamp() - interval '1 minute' then excluded.count else w.count + excluded.count end
  returning key_id, count, (extract(epoch from (window_start + interval '1 minute' - clock_timestamp())) * 1000)::float8 as reset_ms`;
