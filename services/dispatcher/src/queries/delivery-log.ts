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
  return withAttempts(sql, merchantId, { endpointId, status: opts.status }, opts.limit);
}

export async function findDelivery(
  sql: Queryable,
  merchantId: string,
  id: string,
): Promise<{ delivery: DeliveryRow; attempts: AttemptRow[] } | undefined> {
  return (await withAttempts(sql, merchantId, { id }, 1))[0];
}

type AttemptJson = Omit<AttemptRow, 'attempted_at'> & { attempted_at: string };

/**
 * Deliveries with their attempts, read in one statement: a delivery's state and its attempts are written together
 * (`recordAttempts`), and two reads could show an attempt beside the state from before it. None was made before its
 * delivery was created, so the partitions of attempts (by day) older than the delivery are not read: they are pruned
 * as each delivery's attempts are read, by that delivery's bound. The margin covers a dispatcher clock behind
 * Postgres's.
 */
async function withAttempts(
  sql: Queryable,
  merchantId: string,
  filter: { id: string } | { endpointId: string; status: DeliveryStatus | undefined },
  limit: number,
) {
  const where =
    'id' in filter
      ? sql`d.id = ${filter.id}`
      : sql`d.endpoint_id = ${filter.endpointId} ${filter.status ? sql`and d.status = ${filter.status}` : sql``}`;
  const rows = await sql<(DeliveryRow & { attempts: AttemptJson[] })[]>`
    with d as (
      select ${deliveryColumns(sql)} from webhook_deliveries d join webhook_messages m on m.id = d.message_id
      where d.merchant_id = ${merchantId} and ${where}
      order by d.created_at desc, d.id desc
      limit ${limit}
    )
    select d.*, coalesce((
      select json_agg(json_build_object('delivery_id', a.delivery_id, 'attempted_at', a.attempted_at,
        'status_code', a.status_code, 'error', a.error, 'duration_ms', a.duration_ms, 'response_body', a.response_body)
        order by a.id)
      from webhook_attempts a
      where a.delivery_id = d.id and a.attempted_at >= d.created_at - ${ATTEMPT_CLOCK_MARGIN_MS} * interval '1 millisecond'
    ), '[]'::json) as attempts
    from d order by d.created_at desc, d.id desc`;
  return rows.map(({ attempts, ...delivery }) => ({
    delivery,
    attempts: attempts.map((a) => ({ ...a, attempted_at: new Date(a.attempted_at) })),
  }));
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
