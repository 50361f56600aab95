import type { Sql } from '@platform/shared/db';
import { createBatcher } from '@platform/shared/batcher';
import { countRequests, openWindow } from './queries.ts';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets, at least 1. */
  resetSeconds: number;
}

interface Waiter {
  keyId: string;
  limit: number;
  resolve(d: RateDecision): void;
  reject(err: unknown): void;
}

/**
 * One counter row per API key in Postgres (and per client address for the public tracking routes, see
 * surfaces/tracking/router.ts), shared by every gateway replica: a one-minute window that opens at the first
 * request after the previous window closed. The increment and the window roll-over are one atomic upsert, timed by
 * the database's clock, so replicas with skewed clocks still agree.
 *
 * Requests that arrive while the previous upsert is in flight wait for it and are then counted together, all keys
 * in one statement (`count + n` per key). The database's answer tells each request its exact position in its key's
 * window, so the limit stays exact (the 601st request is refused whichever replica it reaches) while the gateway
 * pays one round trip per batch instead of one per request.
 *
 * A batch starts at the end of a turn of the event loop (so that requests read from several connections in one turn
 * share it), but not sooner than `batchIntervalMs` after the previous one started (batcher.ts): under load a batch
 * then carries every request of that interval, and at low rates no request waits.
 */
/** The gateway's interval between two counting statements: short, as every API request waits for its count. */
export const RATE_LIMIT_BATCH_INTERVAL_MS = 4;

export function createRateLimiter(sql: Sql, batchIntervalMs: number) {
  // One statement at a time: requests that arrive while it is in flight go in the next, all keys together.
  const batcher = createBatcher<Waiter>(
    { slots: 1, largestBatch: Infinity, leastIntervalMs: batchIntervalMs },
    (batch) => countBatch(sql, batch),
    (err, batch) => {
      for (const w of batch) w.reject(err);
    },
  );

  return {
    /** Takes the next slot of the key's window. */
    consume: (keyId: string, limit: number): Promise<RateDecision> =>
      new Promise<RateDecision>((resolve, reject) => batcher.add({ keyId, limit, resolve, reject })),
    /** The key's window as it stands, taking nothing: for answers that come before the rate check (402). */
    async peek(keyId: string, limit: number): Promise<RateDecision> {
      const row = await openWindow(sql, keyId);
      if (!row) return { allowed: true, limit, remaining: limit, resetSeconds: 60 };
      return {
        allowed: row.count < limit,
        limit,
        remaining: Math.max(0, limit - row.count),
        resetSeconds: Math.max(1, Math.ceil(row.reset_ms / 1000)),
      };
    },
  };
}

/** Counts one batch of requests, every key in one upsert, and answers each request with its place in its window. */
async function countBatch(sql: Sql, batch: Waiter[]): Promise<void> {
  const byKey = new Map<string, Waiter[]>();
  for (const w of batch) {
    const waiters = byKey.get(w.keyId);
    if (waiters) waiters.push(w);
    else byKey.set(w.keyId, [w]);
  }
  const keyIds = [...byKey.keys()];
  const counts = keyIds.map((k) => byKey.get(k)!.length);
  const rows = await countRequests(sql, keyIds, counts);
  for (const row of rows) {
    const waiters = byKey.get(row.key_id)!;
    const first = row.count - waiters.length + 1;
    const resetSeconds = Math.max(1, Math.ceil(row.reset_ms / 1000));
    waiters.forEach((w, i) => {
      const position = first + i;
      w.resolve({
        allowed: position <= w.limit,
        limit: w.limit,
        remaining: Math.max(0, w.limit - position),
        resetSeconds,
      });
    });
  }
}
