import type { Logger } from '@platform/shared/log';
import type { Worker } from '@platform/shared/service';
import { settle } from './charge.ts';
import type { PaymentsDeps } from './deps.ts';
import { claimStuckIntents } from './queries/processing.ts';

const BATCH = 50;

/**
 * Finishes payment intents left in `processing` for longer than `afterMs`: their request stopped (a crash, a lost
 * database connection) between committing the intent as processing and writing the processor's outcome. Each is
 * leased (claimStuckIntents: SKIP LOCKED, its clock restarted, so replicas never take the same one), then the
 * processor is asked again with the same idempotency keys: it answers what it did the first time, or does it now if
 * the first call never reached it, and the outcome is written as the request would have written it. A pass runs
 * every half of `afterMs`, at least every 10 s.
 */
export function startProcessingReconciler(deps: PaymentsDeps, log: Logger, afterMs: number): Worker {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();

  const pass = async () => {
    try {
      while (!stopped) {
        const stuck = await claimStuckIntents(deps.sql, afterMs, BATCH);
        for (const intent of stuck) {
          const { row } = await settle(deps, intent, log);
          log.info('payment intent finished by the reconciler', { intent: intent.id, status: row.status });
        }
        if (stuck.length < BATCH) break;
      }
    } catch (err) {
      log.warn('processing reconciler pass failed; the next pass retries', { err });
    }
  };
  const timer = setInterval(
    () => {
      running = running.then(pass);
    },
    Math.min(Math.max(afterMs / 2, 10), 10_000),
  );

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
