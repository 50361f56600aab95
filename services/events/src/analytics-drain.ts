import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { startBatchLoop } from '@platform/shared/purge';
import type { Worker } from '@platform/shared/worker';
import { drainAnalyticsPending } from './queries/analytics-pending.ts';

/**
 * Facts moved by one transaction: enough that a burst drains in few commits; few enough to hold few locks and to
 * finish well inside the pool's statement timeout (a batch that timed out would time out again on every run).
 */
const DRAIN_BATCH = 1000;

/**
 * Moves the facts that clicks, events and commissions append to analytics_pending into the rollups, at start and
 * every `intervalMs`, batch after batch until one comes back short (docs/ANALYTICS.md). Never two runs at once in a
 * process; across replicas the drain's lock lets one run while the others skip. What it has not moved yet is
 * missing from GET /api/v1/analytics for that long: the rollups are exact once it has run.
 */
export function startAnalyticsDrain(opts: { sql: Sql; log: Logger; intervalMs: number }): Worker {
  const { sql, log } = opts;
  return startBatchLoop({
    everyMs: opts.intervalMs,
    batch: DRAIN_BATCH,
    runBatch: (limit) => drainAnalyticsPending(sql, limit),
    done: (moved) => {
      if (moved > 0) log.debug('analytics facts rolled up', { count: moved });
    },
    failed: (err) => log.warn('analytics drain failed; the next run retries', { err }),
  });
}
