import type { Sql } from '@platform/shared/db';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets, at least 1. */
  resetSeconds: number;
}

/** At most one counting round trip per key batch in this interval: at most this much latency added under load. */
const MIN_BATCH_INTERVAL_MS = 1;

interface Waiter {
  limit: number;
  resolve(d: RateDecision): void;
  reject(err: unknown): void;
}

/**
 * One counter row per API key in Postgres (and per client address for the public tracking routes, see
 * tracking-routes.ts), shared by every gateway replica: a one-minute window that opens at the first
 * request after the previous window closed. The increment and the window roll-over are one atomic upsert, timed by
 * the database's clock, so replicas with skewed clocks still agree.
 *
 * Requests that arrive while the previous upsert is in flight wait for it and are then counted together, all keys
 * in one statement (`count + n` per key). The database's answer tells each request its exact position in its key's
 * window, so the limit stays exact (the 601st request is refused whichever replica it reaches) while the gateway
 * pays one round trip per batch instead of one per request.
 */
export function createRateLimiter(sql: Sql) {
  let queued = new Map<string, Waiter[]>();
  let flushing = false;
  let scheduled = false;
  let lastStart = 0;

  /**
   * Starts the next batch at the end of this turn of the event loop (so that requests read from several connections
   * in one turn share it), but not sooner than MIN_BATCH_INTERVAL_MS after the previous one started: under load a
   * batch then carries every request of that interval, and at low rates no request waits.
   */
  const schedule = () => {
    if (scheduled || flushing) return;
    scheduled = true;
    const wait = lastStart + MIN_BATCH_INTERVAL_MS - performance.now();
    const run = () => {
      scheduled = false;
      void flush();
    };
    if (wait > 0) setTimeout(run, wait);
    else setImmediate(run);
  };

  const flush = async (): Promise<void> => {
    if (flushing || queued.size === 0) return;
    flushing = true;
    lastStart = performance.now();
    const batch = queued;
    queued = new Map();
    const keyIds = [...batch.keys()];
    const counts = keyIds.map((k) => batch.get(k)!.length);
    try {
      const rows = await sql<{ key_id: string; count: number; reset_ms: number }[]>`
        insert into api_rate_windows as w (key_id, window_start, count)
        select key_id, clock_timestamp(), n
        from unnest(${keyIds}::text[], ${counts}::int[]) as batch(key_id, n)
        order by key_id
        on conflict (key_id) do update set
          window_start = case when w.window_start <= clock_timestamp() - interval '1 minute' then clock_timestamp() else w.window_start end,
          count = case when w.window_start <= clock_timestamp() - interval '1 minute' then excluded.count else w.count + excluded.count end
        returning key_id, count, (extract(epoch from (window_start + interval '1 minute' - clock_timestamp())) * 1000)::float8 as reset_ms`;
      for (const row of rows) {
        const waiters = batch.get(row.key_id)!;
        const first = row.count - waiters.length + 1;
        const resetSeconds = Math.max(1, Math.ceil(row.reset_ms / 1000));
        waiters.forEach((w, i) => {
          const position = first + i;
          w.resolve({ allowed: position <= w.limit, limit: w.limit, remaining: Math.max(0, w.limit - position), resetSeconds });
        });
      }
    } catch (err) {
      for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
    } finally {
      flushing = false;
      if (queued.size > 0) schedule();
    }
  };

  return {
    /** Takes the next slot of the key's window. */
    consume(keyId: string, limit: number): Promise<RateDecision> {
      return new Promise<RateDecision>((resolve, reject) => {
        const waiters = queued.get(keyId);
        if (waiters) waiters.push({ limit, resolve, reject });
        else queued.set(keyId, [{ limit, resolve, reject }]);
        schedule();
      });
    },
    /** The key's window as it stands, taking nothing: for answers that come before the rate check (402). */
    async peek(keyId: string, limit: number): Promise<RateDecision> {
      const [row] = await sql<{ count: number; reset_ms: number }[]>`
        select count, (extract(epoch from (window_start + interval '1 minute' - clock_timestamp())) * 1000)::float8 as reset_ms
        from api_rate_windows where key_id = ${keyId} and window_start > clock_timestamp() - interval '1 minute'`;
      if (!row) return { allowed: true, limit, remaining: limit, resetSeconds: 60 };
      return { allowed: row.count < limit, limit, remaining: Math.max(0, limit - row.count), resetSeconds: Math.max(1, Math.ceil(row.reset_ms / 1000)) };
    },
  };
}
