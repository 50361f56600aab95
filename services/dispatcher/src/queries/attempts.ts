import type { Queryable } from '@platform/shared/db';
import type { PartitionedTable } from '@platform/shared/partitions';
import { deadLetterReasonOf, statusAfter, type AttemptOutcome, type Verdict } from '../domain/verdict.ts';
import type { ClaimedDelivery } from './claims.ts';
import { ACTIVE_SQL, plannedWith } from './planner.ts';

/**
 * Attempts are partitioned by day: a partition is dropped once all its attempts are past WEBHOOK_RETENTION_DAYS,
 * which a whole day reaches within a day of its last attempt. A week of partitions is made ahead, each analyzed
 * as the table was (migration 007).
 */
export const webhookAttemptPartitions: PartitionedTable = {
  table: 'webhook_attempts',
  period: 'day',
  keyType: 'timestamptz',
  ahead: 7,
  storage: 'autovacuum_analyze_scale_factor = 0.02, autovacuum_analyze_threshold = 1000',
};

/** One finished attempt, as the lease holder records it. */
export interface AttemptRecord {
  delivery: Pick<ClaimedDelivery, 'id' | 'endpoint_id'>;
  outcome: AttemptOutcome;
  verdict: Verdict;
  /** Attempts in the series, this one included. */
  attemptsMade: number;
}

/**
 * Writes many attempts and the new state of their deliveries in one statement: the attempt rows (for deliveries
 * that still exist: an endpoint deleted meanwhile took its deliveries with it), and the delivery's new state and
 * next attempt time, only while this replica still holds the lease (an attempt that outlived it must not overwrite
 * a newer state). The lease is released in the same update.
 */
export async function recordAttempts(tx: Queryable, records: AttemptRecord[], replicaId: string): Promise<void> {
  if (records.length === 0) return;
  // The ids again as an array, a primary-key condition on each side: joined only to the JSON rows (estimated at
  // 100), the planner prefers hashing a scan of the table to a hundred probes.
  const ids = records.map((r) => r.delivery.id);
  // JSON rather than parallel arrays: the driver's array encoding cannot carry nulls or booleans.
  const rows = records.map((r) => ({
    id: r.delivery.id,
    attempted_at: r.outcome.attemptedAt.toISOString(),
    status_code: r.outcome.statusCode,
    error: r.outcome.error,
    duration_ms: r.outcome.durationMs,
    response_body: r.outcome.responseBody,
    status: statusAfter(r.verdict),
    delay_ms: r.verdict.kind === 'retry' ? r.verdict.delayMs : null,
    reason: deadLetterReasonOf(r.verdict),
  }));
  // A batch names its deliveries: a scan of the table is never the right plan, but a generic plan made while the
  // table was small can be one, and it is kept as the table grows (until the next ANALYZE: on a server without
  // autovacuum, never). Such a plan scans the whole table on every call once it has grown, and the delivery rate
  // falls with it. Planned without sequential scans, the statement reads the
  // rows by primary key whatever the statistics were.
  await plannedWith(
    tx,
    'enable_seqscan',
    'off',
    tx`
    with o as (
      select * from json_to_recordset(${JSON.stringify(rows)}::text::json)
        as o (id text, attempted_at timestamptz, status_code int, error text, duration_ms int, response_body text, status text,
              delay_ms bigint, reason text)
    ),
    attempts as (
      insert into webhook_attempts (delivery_id, attempted_at, status_code, error, duration_ms, response_body)
      select o.id, o.attempted_at, o.status_code, o.error, o.duration_ms, o.response_body
      from o join webhook_deliveries d on d.id = o.id
      where d.id = any(${ids}::text[])
    )
    update webhook_deliveries d set locked_until = null, locked_by = null, attempt_count = d.attempt_count + 1,
      updated_at = date_trunc('milliseconds', now()), status = o.status, dead_letter_reason = o.reason,
      next_attempt_at = case when o.delay_ms is null then null else now() + o.delay_ms * interval '1 millisecond' end
    from o where d.id = o.id and d.id = any(${ids}::text[]) and d.locked_by = ${replicaId}`,
  );
}

/** What a batch of attempts did to one endpoint, in the order they finished. */
export interface EndpointTally {
  endpointId: string;
  /** Some attempt succeeded: consecutive_failures restarts from the failures after the last success. */
  succeeded: boolean;
  /** Failed attempts (after the last success, when there was one). */
  failures: number;
  /** A 410: the endpoint is disabled (gone) and its waiting deliveries dead-lettered. */
  gone: boolean;
}

/**
 * The endpoints' bookkeeping for a batch of attempts in one statement: every failure adds one to
 * consecutive_failures and a success resets it; reaching failure_threshold (or a 410) disables the endpoint. A row
 * is touched only when something changes (or once a second for last_success_at), so that a busy endpoint's
 * successes do not queue up behind one another on its row lock. The endpoints are locked (`lockEndpoints`) by the
 * caller, in one order, so recorders in several replicas never deadlock on these rows.
 */
export async function settleEndpoints(tx: Queryable, tallies: EndpointTally[]): Promise<void> {
  if (tallies.length === 0) return;
  await tx`
    with t as (
      select * from json_to_recordset(${JSON.stringify(tallies)}::text::json)
        as t ("endpointId" text, succeeded boolean, failures int, gone boolean)
    ),
    n as (
      select e.id, t.succeeded, t.gone, e.enabled,
             case when t.succeeded then t.failures else e.consecutive_failures + t.failures end as failures,
             e.failure_threshold
      from t join webhook_endpoints e on e.id = t."endpointId"
      where t.failures > 0 or t.gone or e.consecutive_failures <> 0 or e.last_success_at is null
         or e.last_success_at < now() - interval '1 second'
    )
    update webhook_endpoints e set
      consecutive_failures = n.failures,
      last_success_at = case when n.succeeded then now() else e.last_success_at end,
      enabled = n.enabled and not (n.gone or n.failures >= n.failure_threshold),
      disabled_reason = case
        when not n.enabled then e.disabled_reason
        when n.gone then 'gone'
        when n.failures >= n.failure_threshold then 'failure_threshold'
        else e.disabled_reason end,
      updated_at = case when n.enabled and (n.gone or n.failures >= n.failure_threshold)
        then date_trunc('milliseconds', now()) else e.updated_at end
    from n where e.id = n.id`;
}

/** After a 410: nothing still waiting for these endpoints will be sent (the receiver says they are gone for good). */
export async function deadLetterWaiting(tx: Queryable, endpointIds: string[]): Promise<void> {
  if (endpointIds.length === 0) return;
  await tx`
    update webhook_deliveries set status = 'dead_lettered', dead_letter_reason = 'endpoint_disabled', next_attempt_at = null,
      queued_at = null, updated_at = date_trunc('milliseconds', now())
    where endpoint_id = any(${endpointIds}::text[]) and status in ${tx.unsafe(ACTIVE_SQL)} and (locked_until is null or locked_until < now())`;
}
