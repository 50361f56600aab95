import { DOMAIN_EVENT_TYPES, type DomainEvent, type DomainEventType } from '@platform/shared/catalogue';
import type { Sql } from '@platform/shared/db';
import { insertDeliveries, insertMessages } from './fan-out.ts';

interface OutboxRow {
  seq: string;
  id: string;
  merchant_id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
  settled: boolean;
}

/**
 * The safety net under the domain-event stream: JetStream with default fsync can lose a message it acknowledged to
 * the relay, or lose its streams altogether. Walks the outbox past the watermark, oldest first, and fans out every
 * domain event that was published more than `afterMs` ago (by then the consumer has had its chance), or written that
 * long ago and never published (no stream took it) — a no-op for those already recorded. Stops at
 * the first row not yet settled, so nothing is skipped. One replica at a time (the watermark row is locked). The
 * events of a batch are recorded with one statement for the messages and one for the deliveries (not one
 * statement per event: every event the stream did deliver passes through here too). The deliveries it creates are
 * due and unhinted: the sweeper hints them on its next pass.
 */
export async function reconcileOutbox(
  sql: Sql,
  afterMs: number,
  batch = 500,
): Promise<{ checked: number; created: number }> {
  return sql.begin(async (tx) => {
    const [mark] = await tx<{ seq: string }[]>`select seq from webhook_fanout_watermark for update skip locked`;
    if (!mark) return { checked: 0, created: 0 };
    const rows = await tx<OutboxRow[]>`
      select seq, id, merchant_id, type, data, created_at,
             coalesce(published_at, created_at) < now() - ${afterMs} * interval '1 millisecond' as settled
      from outbox where seq > ${mark.seq} order by seq limit ${batch}`;
    const settled = rows.findIndex((r) => !r.settled);
    const checked = settled === -1 ? rows.length : settled;
    if (checked === 0) return { checked: 0, created: 0 };
    // The same envelope the relay publishes (outbox.ts), so the body is identical whichever path records it.
    const events: DomainEvent[] = rows
      .slice(0, checked)
      .filter((row) => (DOMAIN_EVENT_TYPES as readonly string[]).includes(row.type))
      .map((row) => ({
        id: row.id,
        type: row.type as DomainEventType,
        created_at: row.created_at.toISOString(),
        merchant_id: row.merchant_id,
        data: row.data,
      }));
    const created =
      events.length > 0 ? await insertDeliveries(tx, await insertMessages(tx, events), { hinted: false }) : [];
    await tx`update webhook_fanout_watermark set seq = ${rows[checked - 1]!.seq}`;
    return { checked, created: created.length };
  });
}
