import type { Sql } from '@platform/shared/db';

/** A billing event leased for delivery. */
export interface BillingEventRow {
  merchant_id: string;
  id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
  attempts: number;
}

/**
 * Leases up to `limit` undelivered events due at `now` (FOR UPDATE SKIP LOCKED, the attempt counted and the next
 * one pushed `leaseMs` past `now`), so that no two replicas send one event at once.
 */
export const leaseDueEvents = (sql: Sql, now: Date, leaseMs: number, limit: number) => sql<BillingEventRow[]>`
  update billing_events e set attempts = e.attempts + 1,
    next_attempt_at = ${now}::timestamptz + ${leaseMs} * interval '1 millisecond'
  from (select merchant_id, id from billing_events
        where delivered_at is null and next_attempt_at <= ${now}
        order by next_attempt_at limit ${limit} for update skip locked) d
  where e.merchant_id = d.merchant_id and e.id = d.id
  returning e.merchant_id, e.id, e.type, e.data, e.created_at, e.attempts`;

export const markDelivered = (sql: Sql, event: { merchant_id: string; id: string }) =>
  sql`update billing_events set delivered_at = now(), last_error = null
    where merchant_id = ${event.merchant_id} and id = ${event.id}`;

/** Records a failed attempt and when to try again: `delayMs` after `now`. */
export const markFailed = (
  sql: Sql,
  event: { merchant_id: string; id: string },
  error: string,
  now: Date,
  delayMs: number,
) =>
  sql`update billing_events set last_error = ${error},
      next_attempt_at = ${now}::timestamptz + ${delayMs} * interval '1 millisecond'
    where merchant_id = ${event.merchant_id} and id = ${event.id}`;
