import type { DomainEvent } from '@platform/shared/catalogue';
import type { Queryable, Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import type { DeliveryStatus } from '@platform/shared/schemas/webhooks';

export type DeadLetterReason = 'client_error' | 'gone' | 'max_attempts' | 'endpoint_disabled';

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

/** A delivery created and due now, for which a wake-up hint is to be published. */
export interface NewDelivery {
  id: string;
  queuedAt: Date;
}

/**
 * The statuses of a delivery still to be attempted, as literal SQL: the partial indexes on active deliveries
 * (`where status in ('pending', 'retrying')`) can serve a query only when the planner can prove their predicate
 * from the query's text. Sent as bind parameters, the statuses are unknown to the generic plan a prepared
 * statement switches to after a few executions, and the claim fell back to scanning and sorting every delivery
 * of the endpoint (5 ms per claim for an endpoint with a few thousand deliveries).
 */
const ACTIVE_SQL = "('pending', 'retrying')";

/**
 * "Still active" for rows a statement finds by primary key, in a form that cannot match the partial indexes'
 * predicate. A queue's active set may be small when statistics are taken and large in a burst: costed from such
 * statistics a partial index looks almost empty, and the planner chose to read all of it (every active delivery of
 * every endpoint, 8,000 rows in a burst of the bench) to find the few ids a claim names, instead of their primary
 * keys. Every claim, hint and clear then cost time in proportion to the whole backlog.
 */
const activeById = (alias: string) => `(${alias}.status in ${ACTIVE_SQL}) is true`;

/** The envelope's exact bytes: fixed here, once, and sent unchanged by every attempt and replay. */
export function serialiseEnvelope(event: DomainEvent): string {
  return JSON.stringify({ id: event.id, type: event.type, created_at: event.created_at, merchant_id: event.merchant_id, data: event.data });
}

/**
 * Records the message and one delivery per enabled endpoint of the merchant subscribed to its type. Idempotent:
 * when the message is already recorded (JetStream redelivery, or the outbox reconciler got there first) nothing is
 * added, so an endpoint registered later never receives an older event by accident.
 * `onlyEndpointId` sends to that endpoint alone, whatever it subscribes to (test events).
 */
export async function fanOut(tx: Queryable, event: DomainEvent, onlyEndpointId?: string): Promise<NewDelivery[]> {
  const inserted = await tx`
    insert into webhook_messages (id, merchant_id, type, body, created_at)
    values (${event.id}, ${event.merchant_id}, ${event.type}, ${serialiseEnvelope(event)}, ${event.created_at})
    on conflict (id) do nothing
    returning id`;
  if (inserted.length === 0) return [];
  const endpoints = await tx<{ id: string }[]>`
    select id from webhook_endpoints
    where merchant_id = ${event.merchant_id} and enabled
      ${onlyEndpointId ? tx`and id = ${onlyEndpointId}` : tx`and ${event.type} = any(event_types)`}`;
  if (endpoints.length === 0) return [];
  const ids = endpoints.map(() => newId('dlv'));
  const created = await tx<{ id: string; queued_at: Date }[]>`
    insert into webhook_deliveries (id, message_id, endpoint_id, merchant_id, status, next_attempt_at, queued_at)
    select d.id, ${event.id}, d.endpoint_id, ${event.merchant_id}, 'pending', now(), now()
    from unnest(${ids}::text[], ${endpoints.map((e) => e.id)}::text[]) as d (id, endpoint_id)
    on conflict (message_id, endpoint_id) do nothing
    returning id, queued_at`;
  return created.map((c) => ({ id: c.id, queuedAt: c.queued_at }));
}

// ---- fan-out in batches ------------------------------------------------------------------------------------------

/** A delivery fanned out by `fanOutMany`, with the endpoint it goes to. */
export interface FannedOut {
  id: string;
  endpointId: string;
}

/**
 * Inserts the messages of many events in one statement and returns, for those not recorded before, the enabled
 * endpoints of their merchants subscribed to their types. Idempotent like `fanOut`: an event already recorded (a
 * redelivery, or the outbox reconciler first) yields nothing. A merchant that does not exist fails the whole
 * statement (foreign key), and the caller falls back to one event at a time to find it.
 */
export async function insertMessages(tx: Queryable, events: DomainEvent[]): Promise<{ message_id: string; merchant_id: string; endpoint_id: string }[]> {
  return tx<{ message_id: string; merchant_id: string; endpoint_id: string }[]>`
    with inserted as (
      insert into webhook_messages (id, merchant_id, type, body, created_at)
      select * from unnest(${events.map((e) => e.id)}::text[], ${events.map((e) => e.merchant_id)}::text[],
                           ${events.map((e) => e.type)}::text[], ${events.map(serialiseEnvelope)}::text[],
                           ${events.map((e) => e.created_at)}::timestamptz[])
      on conflict (id) do nothing
      returning id, merchant_id, type)
    select i.id as message_id, i.merchant_id, e.id as endpoint_id
    from inserted i join webhook_endpoints e on e.merchant_id = i.merchant_id and e.enabled and i.type = any(e.event_types)`;
}

/**
 * One delivery per (message, endpoint) of `insertMessages`, due now and not hinted (queued_at null): the replica
 * claims what it has room for at once, and the sweeper hints the rest as soon as their endpoint has room.
 */
export async function insertDeliveries(tx: Queryable, rows: { message_id: string; merchant_id: string; endpoint_id: string }[]): Promise<FannedOut[]> {
  if (rows.length === 0) return [];
  const ids = rows.map(() => newId('dlv'));
  await tx`
    insert into webhook_deliveries (id, message_id, endpoint_id, merchant_id, status, next_attempt_at, queued_at)
    select d.id, d.message_id, d.endpoint_id, d.merchant_id, 'pending', now(), null
    from unnest(${ids}::text[], ${rows.map((r) => r.message_id)}::text[], ${rows.map((r) => r.endpoint_id)}::text[],
                ${rows.map((r) => r.merchant_id)}::text[]) as d (id, message_id, endpoint_id, merchant_id)
    on conflict (message_id, endpoint_id) do nothing`;
  return rows.map((r, i) => ({ id: ids[i]!, endpointId: r.endpoint_id }));
}

// ---- claiming and recording attempts ---------------------------------------------------------------------------

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

/** The planner settings a statement here may need changed for itself, with the value every other statement has. */
const PLANNER_NORMAL = { enable_seqscan: 'on', plan_cache_mode: 'auto' } as const;

/**
 * Runs one statement of a transaction with a planner setting of its own: set just before it and put back just
 * after, the three sent together, so the transaction's other statements are planned as everywhere else. The plan a
 * prepared statement caches keeps the setting it was made under.
 */
async function plannedWith<T>(tx: Queryable, setting: keyof typeof PLANNER_NORMAL, value: string, statement: PromiseLike<T>): Promise<T> {
  const [, result] = await Promise.all([
    tx`select set_config(${setting}, ${value}, true)`,
    statement,
    tx`select set_config(${setting}, ${PLANNER_NORMAL[setting]}, true)`,
  ]);
  return result;
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
  opts: { endpointIds?: string[]; deliveryIds?: string[]; limit: number; replicaId: string; leaseMs: number; endpointConcurrency: number },
): Promise<ClaimedDelivery[]> {
  if ((opts.endpointIds ?? opts.deliveryIds ?? []).length === 0 || opts.limit <= 0) return [];
  const only = opts.deliveryIds ? tx`and d.id = any(${opts.deliveryIds}::text[])` : tx``;
  const endpoints = opts.endpointIds
    ? tx`e.id = any(${opts.endpointIds}::text[])`
    : tx`e.id in (select endpoint_id from webhook_deliveries where id = any(${opts.deliveryIds!}::text[]))`;
  // Always the generic plan. Once the statistics know of one endpoint's large backlog, the generic plan, costed for
  // an average endpoint, looks dearer than a custom plan for the one claimed, and Postgres planned every claim
  // afresh: 0.42 ms of planning against 0.11 ms of execution, the Postgres CPU a 503 endpoint's backlog added to
  // every other endpoint's events. The statement reads each endpoint's own rows through its indexes whatever the
  // endpoint (test/webhooks/claim-plans.test.ts).
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
      r.previous_secret_encrypted, r.previous_secret_expires_at, m.body`,
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

/** What happened on the wire. */
export interface AttemptOutcome {
  attemptedAt: Date;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseBody: string;
  retryAfterMs: number | null;
}

export type Verdict =
  | { kind: 'succeeded' }
  | { kind: 'gone' }
  | { kind: 'client_error' }
  | { kind: 'retry'; delayMs: number }
  | { kind: 'max_attempts' };

/**
 * The delivery state table of the contract (§3): 2xx succeeds; 410 dead-letters and disables the endpoint; any
 * other 4xx but 429 dead-letters at once; 429, 5xx, 3xx (redirects are not followed), timeouts and network errors
 * are retried by the backoff table, Retry-After honoured, until the tenth attempt.
 */
export function judgeAttempt(
  outcome: Pick<AttemptOutcome, 'statusCode' | 'retryAfterMs'>,
  attemptsMade: number,
  maxAttempts: number,
  delayFor: (attemptsMade: number, retryAfterMs: number | null) => number,
): Verdict {
  const code = outcome.statusCode;
  if (code !== null && code >= 200 && code < 300) return { kind: 'succeeded' };
  if (code === 410) return { kind: 'gone' };
  if (code !== null && code >= 400 && code < 500 && code !== 429) return { kind: 'client_error' };
  if (attemptsMade >= maxAttempts) return { kind: 'max_attempts' };
  return { kind: 'retry', delayMs: delayFor(attemptsMade, outcome.retryAfterMs) };
}

/** One finished attempt, as the lease holder records it. */
export interface AttemptRecord {
  delivery: Pick<ClaimedDelivery, 'id' | 'endpoint_id'>;
  outcome: AttemptOutcome;
  verdict: Verdict;
  /** Attempts in the series, this one included. */
  attemptsMade: number;
}

const STATUS_AFTER: Record<Verdict['kind'], DeliveryStatus> = {
  succeeded: 'succeeded',
  retry: 'retrying',
  gone: 'dead_lettered',
  client_error: 'dead_lettered',
  max_attempts: 'dead_lettered',
};

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
    status: STATUS_AFTER[r.verdict.kind],
    delay_ms: r.verdict.kind === 'retry' ? r.verdict.delayMs : null,
    reason: r.verdict.kind === 'gone' || r.verdict.kind === 'client_error' || r.verdict.kind === 'max_attempts' ? r.verdict.kind : null,
  }));
  // A batch names its deliveries: a scan of the table is never the right plan, but a generic plan made while the
  // table was small can be one, and it is kept as the table grows (until the next ANALYZE: on a server without
  // autovacuum, never). The benchmark's, made after its warm-up, scanned the whole table twice per call once it had
  // grown to 30,000 rows, and halved the delivery rate. Planned without sequential scans, the statement reads the
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

// ---- the sweeper -------------------------------------------------------------------------------------------------

/**
 * Dead-letters the due deliveries of disabled endpoints in one statement (decisions §10). It runs on every sweep, and
 * there usually is no disabled endpoint: the disabled endpoints are listed first and their due deliveries read
 * through (endpoint_id, next_attempt_at). As a join, a plan costed while little was active read every due delivery of
 * every endpoint on every sweep (a failing endpoint's backlog of 50,000 included) to find none.
 */
export async function deadLetterDueOfDisabled(sql: Queryable): Promise<number> {
  const rows = await sql`
    update webhook_deliveries d set status = 'dead_lettered', dead_letter_reason = 'endpoint_disabled', next_attempt_at = null,
      queued_at = null, updated_at = date_trunc('milliseconds', now())
    where d.endpoint_id = any(array(select e.id from webhook_endpoints e where not e.enabled))
      and d.status in ${sql.unsafe(ACTIVE_SQL)} and d.next_attempt_at <= now() and (d.locked_until is null or d.locked_until < now())
    returning d.id`;
  return rows.length;
}

/**
 * Marks as hinted, and returns, the deliveries that are due, unleased and not hinted recently: at most as many per
 * endpoint as it has room for, so a backlog of one endpoint neither floods the hint stream nor crowds out others.
 * The work is bounded per endpoint whatever its backlog: its room is computed once (busy rows counted up to the
 * concurrency limit, through the leased and hinted indexes), then only its first `free` due rows are read, in
 * order, through (endpoint_id, next_attempt_at). The conditions are checked again under row locks, so two
 * sweepers never hint the same row twice.
 */
export async function markDueForHint(
  sql: Queryable,
  opts: { requeueAfterMs: number; endpointConcurrency: number; batch: number },
): Promise<NewDelivery[]> {
  const requeue = sql`now() - ${opts.requeueAfterMs} * interval '1 millisecond'`;
  const dueUnlessActive = sql`
    d.next_attempt_at <= now()
    and (d.locked_until is null or d.locked_until < now())
    and (d.queued_at is null or d.queued_at < ${requeue})`;
  const rows = await sql<{ id: string; queued_at: Date }[]>`
    with room as materialized (
      select e.id as endpoint_id,
             (case when e.consecutive_failures > 0 then 1 else ${opts.endpointConcurrency} end)
             - (select count(*) from (
                  select 1 from webhook_deliveries x
                  where x.endpoint_id = e.id and x.locked_until > now()
                  limit ${opts.endpointConcurrency}) leased)
             - (select count(*) from (
                  select 1 from webhook_deliveries x
                  where x.endpoint_id = e.id and x.status in ${sql.unsafe(ACTIVE_SQL)} and x.queued_at >= ${requeue}
                  limit ${opts.endpointConcurrency}) hinted) as free
      from webhook_endpoints e
      where e.enabled
        and exists (select 1 from webhook_deliveries d
                    where d.endpoint_id = e.id and d.status in ${sql.unsafe(ACTIVE_SQL)} and d.next_attempt_at <= now())
    ),
    chosen as (
      select c.id, c.next_attempt_at
      from room r
      cross join lateral (
        select d.id, d.next_attempt_at from webhook_deliveries d
        where d.endpoint_id = r.endpoint_id and d.status in ${sql.unsafe(ACTIVE_SQL)} and ${dueUnlessActive}
        order by d.next_attempt_at, d.id
        limit greatest(r.free, 0)
      ) c
      order by c.next_attempt_at
      limit ${opts.batch}
    ),
    -- By primary key: joined to chosen (estimated at the batch size), the planner would read the whole table.
    -- Rows locked by another transaction (an attempt being recorded, a claim) are skipped, not waited for: they
    -- are no longer due, and waiting for them while holding rows another of those wants is how two deadlock.
    locked as (
      select l.id from chosen c cross join lateral (
        select d.id from webhook_deliveries d
        where d.id = c.id and ${sql.unsafe(activeById('d'))} and ${dueUnlessActive}
        for update skip locked) l
    )
    update webhook_deliveries d set queued_at = now()
    where d.id = any(array(select id from locked))
    returning d.id, d.queued_at`;
  return rows.map((r) => ({ id: r.id, queuedAt: r.queued_at }));
}

/**
 * Deliveries that are due and not being attempted (no live lease), and the seconds since the oldest of them fell due
 * (0 when none): what an alert on a stalled dispatcher watches. Read through the due index, counted up to 100,000.
 */
export async function dueUnattempted(sql: Queryable): Promise<{ count: number; oldestAgeSeconds: number }> {
  const [row] = await sql<{ count: number; age: number }[]>`
    select count(*)::int as count, coalesce(extract(epoch from now() - min(next_attempt_at)), 0)::float8 as age
    from (select next_attempt_at from webhook_deliveries
          where status in ${sql.unsafe(ACTIVE_SQL)} and next_attempt_at <= now() and (locked_until is null or locked_until < now())
          limit 100000) due`;
  return { count: row!.count, oldestAgeSeconds: row!.age };
}

/** Deletes messages (with their deliveries and attempts) older than the retention, unless still being delivered. */
export async function deleteExpired(sql: Sql, retentionDays: number): Promise<number> {
  const rows = await sql`
    delete from webhook_messages m
    where m.id in (
      select id from webhook_messages
      where created_at < now() - ${retentionDays} * interval '1 day'
        and not exists (select 1 from webhook_deliveries d where d.message_id = webhook_messages.id and d.status in ${sql.unsafe(ACTIVE_SQL)})
      limit 1000)
    returning m.id`;
  return rows.length;
}

// ---- the delivery log and replay --------------------------------------------------------------------------------

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

async function withAttempts(sql: Queryable, merchantId: string, deliveries: DeliveryRow[]) {
  if (deliveries.length === 0) return [];
  const attempts = await sql<AttemptRow[]>`
    select a.delivery_id, a.attempted_at, a.status_code, a.error, a.duration_ms, a.response_body
    from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
    where d.merchant_id = ${merchantId} and a.delivery_id in ${sql(deliveries.map((d) => d.id))}
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
  filter: { deliveryId: string; statuses: DeliveryStatus[] } | { endpointId: string; since: string; until: string; statuses: DeliveryStatus[] },
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

/**
 * For work created where no hint can be published (the operator CLI has no NATS connection): clearing queued_at
 * lets the sweeper hint these deliveries on its next pass instead of after WEBHOOK_REQUEUE_AFTER_MS.
 */
export async function forgetHints(sql: Queryable, deliveries: NewDelivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  await sql`update webhook_deliveries set queued_at = null where id in ${sql(deliveries.map((d) => d.id))} and locked_until is null`;
}
