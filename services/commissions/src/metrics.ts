import { Counter, type Registry } from 'prom-client';
import type { ConversionEnvelope } from './domain/envelope.ts';
import type { ProcessOutcome } from './domain/plan.ts';

type Process = (envelopes: ConversionEnvelope[]) => Promise<ProcessOutcome[]>;

/**
 * `process` counted in conversions_processed_total once its transaction has committed: by outcome (processed,
 * duplicate, unknown_merchant) and by path, the stream's consumer or the reconciler (conversions the stream lost).
 * A batch that fails is not counted; its conversions are, when they are processed again.
 */
export function countedProcessing(registry: Registry, process: Process): { stream: Process; reconciler: Process } {
  const processed = new Counter({
    name: 'conversions_processed_total',
    help: 'Conversions the commissions service committed, by outcome and by path (stream or reconciler)',
    labelNames: ['outcome', 'via'],
    registers: [registry],
  });
  const via =
    (path: 'stream' | 'reconciler'): Process =>
    async (envelopes) => {
      const outcomes = await process(envelopes);
      const byKind = new Map<ProcessOutcome['kind'], number>();
      for (const o of outcomes) byKind.set(o.kind, (byKind.get(o.kind) ?? 0) + 1);
      for (const [outcome, count] of byKind) processed.inc({ outcome, via: path }, count);
      return outcomes;
    };
  return { stream: via('stream'), reconciler: via('reconciler') };
}

/** Counts platform payouts found disagreeing with their ledger payouts (alert AffiliatePlatformPayoutMismatch). */
export interface PayoutMetrics {
  mismatch(): void;
}

export function payoutMetrics(registry: Registry): PayoutMetrics {
  const mismatches = new Counter({
    name: 'platform_payout_mismatches_total',
    help: 'Platform payouts whose state disagrees with their ledger payout (a canceled payout the ledger paid, a paid one it failed, …): each needs an operator',
    registers: [registry],
  });
  return { mismatch: () => mismatches.inc() };
}
