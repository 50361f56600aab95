import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import type { Worker } from '@platform/shared/service';
import type { HintPublisher } from './hints.ts';
import type { NewDelivery } from './queries/fan-out.ts';
import { deadLetterDueOfDisabled, deleteExpired, markDueForHint } from './queries/sweep.ts';
import { reconcileOutbox } from './queries/outbox.ts';

const RETENTION_EVERY_MS = 3_600_000;

/**
 * Postgres is the source of truth, and this is what makes it so. Every interval, in every replica:
 * - due deliveries of disabled endpoints are dead-lettered;
 * - due, unleased deliveries without a recent hint are hinted (scheduled retries, hints lost or purged, deliveries
 *   whose replica died mid-attempt once the lease has run out); those whose hint cannot be published (the hint
 *   stream is gone) are leased and attempted by this replica, as far as it has free slots;
 * - the outbox is reconciled (events lost by the domain-event stream);
 * - hourly, records past the retention are deleted.
 */
export function startSweeper(opts: {
  sql: Sql;
  log: Logger;
  hints: HintPublisher;
  intervalMs: number;
  requeueAfterMs: number;
  reconcileAfterMs: number;
  endpointConcurrency: number;
  retentionDays: number;
  /** Leases and attempts due deliveries whose hint could not be published (no hint stream). */
  attemptUnhinted: (deliveries: NewDelivery[]) => Promise<void>;
}): Worker {
  const { sql, log, hints } = opts;
  let running: Promise<void> | null = null;
  let lastReconcile = 0;
  let lastRetention = 0;
  const reconcileEvery = Math.min(Math.max(opts.reconcileAfterMs / 2, opts.intervalMs), 10_000);

  const tick = async () => {
    const deadLettered = await deadLetterDueOfDisabled(sql);
    if (deadLettered > 0) log.info('deliveries of disabled endpoints dead-lettered', { count: deadLettered });
    for (;;) {
      const due = await markDueForHint(sql, {
        requeueAfterMs: opts.requeueAfterMs,
        endpointConcurrency: opts.endpointConcurrency,
        batch: 500,
      });
      const unhinted = await hints.publish(due);
      if (unhinted.length > 0) await opts.attemptUnhinted(unhinted);
      if (due.length > 0) log.debug('due deliveries hinted', { count: due.length });
      if (due.length < 500) break;
    }
    if (Date.now() - lastReconcile >= reconcileEvery) {
      lastReconcile = Date.now();
      for (;;) {
        const { checked, created } = await reconcileOutbox(sql, opts.reconcileAfterMs);
        // Hinted by the next pass, like any due delivery without a hint.
        if (created > 0) log.warn('events missing from the stream fanned out from the outbox', { deliveries: created });
        if (checked < 500) break;
      }
    }
    if (Date.now() - lastRetention >= RETENTION_EVERY_MS) {
      lastRetention = Date.now();
      let deleted = 0;
      for (
        let n = await deleteExpired(sql, opts.retentionDays);
        n > 0;
        n = await deleteExpired(sql, opts.retentionDays)
      )
        deleted += n;
      if (deleted > 0) log.info('expired webhook messages deleted', { count: deleted });
    }
  };

  const timer = setInterval(() => {
    if (running) return;
    running = tick()
      .catch((err) => log.warn('sweep failed; next interval retries', { err }))
      .finally(() => {
        running = null;
      });
  }, opts.intervalMs);

  return {
    async stop() {
      clearInterval(timer);
      if (running) await running;
    },
  };
}
