import type { Logger } from '@platform/shared/log';
import type { Worker } from '@platform/shared/service';
import { settle } from './charge.ts';
import type { PaymentsDeps } from './deps.ts';
import { claimStuckIntents } from './queries/processing.ts';

/** At most this many intents a pass, so that a stop is never kept waiting long. */
const PER_PASS = 100;

/**
 * Finishes payment intents left in `processing` for longer than `afterMs`: their request stopped (a crash, a lost
 * database connection) between committing the intent as processing and writing the processor's outcome. Each is
 * leased (claimStuckIntents: SKIP LOCKED, its clock restarted, so another replica leaves it alone for `afterMs`),
 * then the processor is asked again with the same idempotency keys: it answers what it did the first time, or does it
 * now if the first call never reached it, and the outcome is written as the request would have written it (a lease
 * that runs out only costs a repeated call, which the processor replays). A pass runs every half of `afterMs`, at
 * least every 10 s.
 */
export function startProcessingReconciler(deps: PaymentsDeps, log: Logger, afterMs: number): Worker {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();

  const pass = async () => {
    try {
      // One at a time: the lease only has to outlast one processor call, not a batch's.
      for (let done = 0; !stopped && done < PER_PASS; done++) {
        const [intent] = await claimStuckIntents(deps.sql, afterMs, 1);
        if (!intent) break;
        const { row } = await settle(deps, intent, log);
        log.info('payment intent finished by the reconciler', { intent: intent.id, status: row.status });
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
