import type { Queryable } from '@platform/shared/db';
import type { DeliveryStatus } from '@platform/shared/schemas/webhooks';
import type { DeadLetterReason } from '../domain/verdict.ts';
import type { NewDelivery } from './fan-out.ts';

export interface DeliveryRow {
  id: string;
  message_id: string;
  endpoint_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date | null;
  dead_letter_reason: DeadLetterReason | null;
  created_at: Date;
  updated_at: Date;
}

export interface AttemptRow {
  delivery_id: string;
  attempted_at: Date;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_body: string;
}

const ATTEMPT_CLOCK_MARGIN_MS = 3_600_000;

const deliveryColumns = (sql: Queryable) => sql`
  d.id, d.message_id, d.endpoint_id, m.type as event_type, d.status, d.attempt_count, d.next_attempt_at,
  d.dead_letter_reason, d.created_at, d.updated_at`;

export async function listDeliveries(
  sql: Queryable,
  merchantId: string,
  endpointId: string,
  opts: { status?: DeliveryStatus; limit: number },
): Promise<{ delivery: DeliveryRow; attempts: AttemptRow[] }[]> {
  const deliveries = await sql<DeliveryRow[]>`
    select ${deliveryColumns(sql)} from webhook_deliveries d join webhook_messages m on m.id = d.message_id
    where d.merchant_id = ${merchantId} and d.endpoint_id = ${endpointId}
      ${opts.status ? sql`and d.status = ${opts.status}` : sql``}
    order by d.created_at desc, d.id desc
    limit ${opts.limit}`;
  return withAttempts(sql, merchantId, deliveries);
}

export async function findDelivery(
  sql: Queryable,
  merchantId: string,
  id: string,
): Promise<{ delivery: DeliveryRow; attempts: AttemptRow[] } | undefined> {
  const deliveries = await sql<DeliveryRow[]>`
    select ${deliveryColumns(sql)} from webhook_deliveries d join webhook_messages m on m.id = d.message_id
    where d.merchant_id = ${merchantId} and d.id = ${id}`;
  return (await withAttempts(sql, merchantId, deliveries))[0];
}

/**
 * The attempts of these deliveries. None was made before its delivery was created, so the partitions of attempts
 * (by day) older than the oldest delivery are not read; the margin covers a dispatcher clock behind Postgres's.
 */
async function withAttempts(sql: Queryable, merchantId: string, deliveries: DeliveryRow[]) {
  if (deliveries.length === 0) return [];
  const oldest = new Date(Math.min(...deliveries.map((d) => d.created_at.getTime())) - ATTEMPT_CLOCK_MARGIN_MS);
  const attempts = await sql<AttemptRow[]>`
    select a.delivery_id, a.attempted_at, a.status_code, a.error, a.duration_ms, a.response_body
    from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
    where d.merchant_id = ${merchantId} and a.delivery_id in ${sql(deliveries.map((d) => d.id))}
      and a.attempted_at >= ${oldest}
    order by a.id`;
  const byDelivery = new Map<string, AttemptRow[]>();
  for (const a of attempts) byDelivery.set(a.delivery_id, [...(byDelivery.get(a.delivery_id) ?? []), a]);
  return deliveries.map((delivery) => ({ delivery, attempts: byDelivery.get(delivery.id) ?? [] }));
}

/**
 * Starts a new series of attempts for finished deliveries: due now, attempt_count back to 0, the same message (same
 * webhook-id and body); each attempt signs afresh. Returns the ids, for hints.
 */
export async function replayDeliveries(
  tx: Queryable,
  merchantId: string,
  filter:
    | { deliveryId: string; statuses: DeliveryStatus[] }
    | { endpointId: string; since: string; until: string; statuses: DeliveryStatus[] },
): Promise<NewDelivery[]> {
  const where =
    'deliveryId' in filter
      ? tx`id = ${filter.deliveryId}`
      : tx`endpoint_id = ${filter.endpointId} and created_at >= ${filter.since}::timestamptz and created_at < ${filter.until}::timestamptz`;
  const rows = await tx<{ id: string; queued_at: Date }[]>`
    update webhook_deliveries set status = 'pending', attempt_count = 0, next_attempt_at = now(), dead_letter_reason = null,
      queued_at = now(), updated_at = date_trunc('milliseconds', now())
    where merchant_id = ${merchantId} and ${where} and status in ${tx(filter.statuses)}
      and (locked_until is null or locked_until < now())
    returning id, queued_at`;
  return rows.map((r) => ({ id: r.id, queuedAt: r.queued_at }));
}
