import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { advanceConversionWatermark, conversionsAfter, readConversionWatermark } from './queries/reconcile.ts';
import { PoisonMessage } from '@platform/shared/envelope';
import { parseConversionEnvelope, type ConversionEnvelope } from './domain/envelope.ts';
import type { ProcessOutcome } from './process.ts';

/** Outbox rows one pass reads at most. */
const RECONCILE_BATCH = 500;
/** Conversions processed per transaction, as the consumer batches them. */
const PROCESS_BATCH = 32;

interface ReconcileOptions {
  settleMs: number;
  log: Logger;
  process: (envelopes: ConversionEnvelope[]) => Promise<ProcessOutcome[]>;
}

/**
 * The safety net under the CONVERSIONS stream: JetStream with default fsync can lose a message it acknowledged to
 * the relay, and nothing would ever process that conversion; a stream that is gone takes nothing. Walks the outbox
 * past the watermark, oldest first, and processes every `conversion.recorded` published more than `settleMs` ago (or
 * written that long ago and never published) that has no processed_conversions row,
 * with the consumer's own processing (idempotent: a message the consumer, or another replica's pass, takes at the
 * same moment counts once), batch after batch; answers how many it processed. Stops at the first row not yet
 * settled, so nothing is skipped. No connection is held while the conversions are processed (a pool of one must
 * not wait for itself); the watermark only moves forward, and only after everything before it was processed, so a
 * failure leaves it for the next pass.
 */
export async function reconcileConversions(sql: Sql, opts: ReconcileOptions): Promise<number> {
  let processed = 0;
  for (;;) {
    const pass = await reconcileBatch(sql, opts);
    processed += pass.processed;
    if (pass.checked < RECONCILE_BATCH) return processed;
  }
}

/** One batch of outbox rows past the watermark: see reconcileConversions. */
async function reconcileBatch(sql: Sql, opts: ReconcileOptions): Promise<{ checked: number; processed: number }> {
  const mark = await readConversionWatermark(sql);
  const rows = await conversionsAfter(sql, mark, opts.settleMs, RECONCILE_BATCH);
  const firstUnsettled = rows.findIndex((r) => !r.settled);
  const checked = firstUnsettled === -1 ? rows.length : firstUnsettled;
  if (checked === 0) return { checked: 0, processed: 0 };
  const missing: ConversionEnvelope[] = [];
  for (const row of rows.slice(0, checked)) {
    if (row.processed) continue;
    try {
      missing.push(parseConversionEnvelope(Buffer.from(row.envelope)));
    } catch (err) {
      if (!(err instanceof PoisonMessage)) throw err;
      // The consumer terminates such a message too: it can never be processed.
      opts.log.warn('outbox conversion cannot be processed; skipped', { seq: row.seq, reason: err.message });
    }
  }
  for (let start = 0; start < missing.length; start += PROCESS_BATCH)
    await opts.process(missing.slice(start, start + PROCESS_BATCH));
  await advanceConversionWatermark(sql, rows[checked - 1]!.seq);
  return { checked, processed: missing.length };
}
