import { Counter, type Registry } from 'prom-client';
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
 *
 * A fact no rollup can store is set aside (analytics_set_aside) rather than failing every run after it: logged once
 * at error level and counted in `analytics_set_aside_total`, which the AffiliateAnalyticsFactSetAside alert watches.
 */
export function startAnalyticsDrain(opts: { sql: Sql; log: Logger; intervalMs: number; registry?: Registry }): Worker {
  const { sql, log } = opts;
  const setAsideTotal = opts.registry
    ? new Counter({
        name: 'analytics_set_aside_total',
        // No labels: the series exists (at 0) from the start, for the alert to compare; the log line names the fact.
        help: 'Pending analytics facts the drain set aside because no rollup can store them',
        registers: [opts.registry],
      })
    : null;
  return startBatchLoop({
    everyMs: opts.intervalMs,
    batch: DRAIN_BATCH,
    runBatch: (limit) =>
      drainAnalyticsPending(sql, limit, (fact) => {
        log.error('analytics fact set aside: no rollup can store it', {
          fact_id: fact.id,
          merchant_id: fact.merchant_id,
          kind: fact.kind,
          error_code: fact.error_code,
          reason: fact.error_message,
        });
        setAsideTotal?.inc();
      }),
    done: (moved) => {
      if (moved > 0) log.debug('analytics facts rolled up', { count: moved });
    },
    failed: (err) => log.warn('analytics drain failed; the next run retries', { err }),
  });
}
