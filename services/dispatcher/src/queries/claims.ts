import type { Queryable } from '@platform/shared/db';
import type { TraceCarrier } from '@platform/shared/tracing/context';
import { ACTIVE_SQL, activeById, plannedWith } from './planner.ts';

/** Everything one attempt needs, read under the lease. */
export interface ClaimedDelivery {
  id: string;
  message_id: string;
  endpoint_id: string;
  merchant_id: string;
  attempt_count: number;
  url: string;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
  body: string;
  /** The trace context its message was fanned out in (tracing on), which its attempts continue; null otherwise. */
  trace_context: TraceCarrier | null;
}

/**
 * For transactions that only lease deliveries or record attempts: their commit returns before its WAL is flushed.
 * A Postgres crash may then lose the last few hundred milliseconds of them, and all that does is repeat an attempt
 * (a lost lease, or a lost outcome, lets the delivery be attempted again once due): delivery is at least once, and
 * receivers deduplicate on webhook-id. Never used where something is acknowledged on the strength of the commit
 * (the fan-out acks domain events after a durable commit).
 */
export async function relaxCommit(tx: Queryable): Promise<void> {
  await tx`set local synchronous_commit = off`;
}

/** Advisory lock space of per-endpoint claim serialisation (any constant not used elsewhere). */
const CLAIM_LOCK_SPACE = 7_241_020;

/**
 * Serialises claims (and the recording that frees an endpoint's slots) per endpoint across replicas, so that the
 * count of leases the claim reads next is exact. An advisory lock rather than the endpoint row: the row is updated
 * by recording, and by the API. Taken in one order (by lock key) by everyone, so two transactions locking several
 * endpoints never wait for each other in a cycle. Must be a statement of its own before the claim: a statement's
 * snapshot is taken when it starts, before a lock it would take itself.
 */
export async function lockEndpoints(tx: Queryable, endpointIds: string[]): Promise<void> {
  if (endpointIds.length === 0) return;
  await tx`
    select pg_advisory_xact_lock(${CLAIM_LOCK_SPACE}, k) from (
      select distinct hashtext(id) as k from unnest(${endpointIds}::text[]) as id order by k) keys`;
}

/** `lockEndpoints` for the endpoints of named deliveries (hints name deliveries). */
export async function lockEndpointsOf(tx: Queryable, deliveryIds: string[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  await tx`
    select pg_advisory_xact_lock(${CLAIM_LOCK_SPACE}, k) from (
      select distinct hashtext(endpoint_id) as k from webhook_deliveries where id = any(${deliveryIds}::text[]) order by k) keys`;
}

/**
 * Takes leases on due deliveries of the given endpoints (or of the named deliveries' endpoints; only the named
 * deliveries when `deliveryIds` is given), at
 * most `limit` in all and never more per endpoint than it has room for: its concurrency (1 while it is failing, so
 * a struggling receiver is not hammered and cannot occupy many of a replica's slots) minus the leases it holds.
 * Disabled endpoints get nothing (the sweeper dead-letters their due deliveries). The endpoints must be locked
 * (`lockEndpoints`) by this transaction. One statement, returning what the attempts need.
 */
export async function claimDue(
  tx: Queryable,
  opts: {
    endpointIds?: string[];
    deliveryIds?: string[];
    limit: number;
    replicaId: string;
    leaseMs: number;
    endpointConcurrency: number;
  },
): Promise<ClaimedDelivery[]> {
  if ((opts.endpointIds ?? opts.deliveryIds ?? []).length === 0 || opts.limit <= 0) return [];
  const only = opts.deliveryIds ? tx`and d.id = any(${opts.deliveryIds}::text[])` : tx``;
  const endpoints = opts.endpointIds
    ? tx`e.id = any(${opts.endpointIds}::text[])`
    : tx`e.id in (select endpoint_id from webhook_deliveries where id = any(${opts.deliveryIds!}::text[]))`;
  // Always the generic plan. Once the statistics know of one endpoint's large backlog, the generic plan, costed for
  // an average endpoint, looks dearer than a custom plan for the one claimed, and Postgres planned every claim
  // afresh, planning costing several times the execution: the Postgres CPU a failing endpoint's backlog added to
  // every other endpoint's events. The statement reads each endpoint's own rows through its indexes whatever the
  // endpoint (test/perf/claim-plans.happy.test.ts).
  return plannedWith(
    tx,
    'plan_cache_mode',
    'force_generic_plan',
    tx<ClaimedDelivery[]>`
    with room as materialized (
      select e.id as endpoint_id, e.url, e.secret_encrypted, e.previous_secret_encrypted, e.previous_secret_expires_at,
             (case when e.consecutive_failures > 0 then 1 else ${opts.endpointConcurrency} end)
             - (select count(*) from (
                  select 1 from webhook_deliveries x
                  where x.endpoint_id = e.id and x.locked_until > now()
                  limit ${opts.endpointConcurrency}) leased) as free
      from webhook_endpoints e
      where ${endpoints} and e.enabled
    ),
    chosen as (
      select c.id, c.message_id, r.endpoint_id
      from room r
      cross join lateral (
        select d.id, d.message_id, d.next_attempt_at from webhook_deliveries d
        where d.endpoint_id = r.endpoint_id ${only}
          and d.status in ${tx.unsafe(ACTIVE_SQL)} and d.next_attempt_at <= now()
          and (d.locked_until is null or d.locked_until < now())
        order by d.next_attempt_at, d.id
        limit greatest(r.free, 0)
      ) c
      order by c.next_attempt_at, c.id
      limit ${opts.limit}
    ),
    -- Row locks only on what is taken. Locked inside the lateral, every endpoint's whole room was locked (a heap
    -- write and a WAL record per row) and most of it dropped by the limit: 216 rows locked to lease 24, refilling
    -- 16 endpoints. The conditions are checked again on the row's latest version under the lock. One primary-key
    -- probe per chosen row: with "id = any(array(select id from chosen))", a generic plan made while the table was
    -- small read all of it for every claim once it had grown.
    locked as (
      select l.id from chosen c cross join lateral (
        select d.id from webhook_deliveries d
        where d.id = c.id and ${tx.unsafe(activeById('d'))} and (d.locked_until is null or d.locked_until < now())
        for update skip locked) l
    )
    update webhook_deliveries d set locked_until = now() + ${opts.leaseMs} * interval '1 millisecond',
      locked_by = ${opts.replicaId}, queued_at = null
    from chosen c
      join locked l on l.id = c.id
      join room r on r.endpoint_id = c.endpoint_id
      join webhook_messages m on m.id = c.message_id
    where d.id = c.id
    returning d.id, d.message_id, d.endpoint_id, d.merchant_id, d.attempt_count, r.url, r.secret_encrypted,
      r.previous_secret_encrypted, r.previous_secret_expires_at, m.body, m.trace_context`,
  );
}

/**
 * Hinted deliveries that could not be claimed (their endpoint had no room): forgetting the hint lets the sweeper
 * hint them again as soon as the endpoint has room, rather than after WEBHOOK_REQUEUE_AFTER_MS.
 */
export async function clearHints(tx: Queryable, deliveryIds: string[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  await tx`
    update webhook_deliveries set queued_at = null
    where id = any(${deliveryIds}::text[]) and queued_at is not null and ${tx.unsafe(activeById('webhook_deliveries'))}`;
}
