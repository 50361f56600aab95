import type { Queryable } from '@platform/shared/db';
import { outboxEnvelope } from '@platform/shared/outbox';

export interface OutboxConversion {
  seq: string;
  /** The envelope as the relay published it. */
  envelope: string;
  /**
   * Published more than the reconciler's delay ago (the consumer has had its chance), or written that long ago and
   * never published (the stream was gone): processed from here either way.
   */
  settled: boolean;
  /** A processed_conversions row exists: the consumer (or an earlier pass) processed it. */
  processed: boolean;
}

export async function readConversionWatermark(sql: Queryable): Promise<string> {
  const [mark] = await sql<{ seq: string }[]>`select seq from conversion_reconcile_watermark`;
  return mark!.seq;
}

/** The `conversion.recorded` outbox rows after `afterSeq`, oldest first, with whether each is settled and processed. */
export async function conversionsAfter(
  tx: Queryable,
  afterSeq: string,
  settleMs: number,
  limit: number,
): Promise<OutboxConversion[]> {
  return tx<OutboxConversion[]>`
    select o.seq, ${outboxEnvelope(tx)} as envelope,
           coalesce(o.published_at, o.created_at) < now() - ${settleMs} * interval '1 millisecond' as settled,
           exists (select from processed_conversions p where p.merchant_id = o.merchant_id and p.event_id = o.data->>'event_id') as processed
    from outbox o
    where o.seq > ${afterSeq} and o.type = 'conversion.recorded'
    order by o.seq
    limit ${limit}`;
}

/** Moves the watermark to `seq`, never back (another replica's pass may have gone further meanwhile). */
export async function advanceConversionWatermark(sql: Queryable, seq: string): Promise<void> {
  await sql`update conversion_reconcile_watermark set seq = greatest(seq, ${seq}::bigint)`;
}
