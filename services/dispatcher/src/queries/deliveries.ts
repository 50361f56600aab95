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

const ACTIVE = ['pending', 'retrying'];

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

export type ClaimResult =
  | { kind: 'claimed'; delivery: ClaimedDelivery }
  | { kind: 'skipped'; reason: 'gone' | 'not_due' | 'endpoint_busy' | 'endpoint_disabled' };

interface EndpointLockRow {
  id: string;
  enabled: boolean;
  consecutive_failures: number;
  url: string;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
}

/** Advisory lock space of per-endpoint claim serialisation (any constant not used elsewhere). */
const CLAIM_LOCK_SPACE = 7_241_020;

/**
 * Takes the lease on one due delivery: the named one, or the endpoint's next due one, and never more leases on an
 * endpoint than its concurrency allows. An endpoint that has been failing gets one attempt at a time: a struggling
 * receiver is not hammered, and it cannot occupy many of a replica's slots.
 */
export async function claimDelivery(
  sql: Sql,
  target: { deliveryId: string } | { endpointId: string },
  opts: { replicaId: string; leaseMs: number; endpointConcurrency: number },
): Promise<ClaimResult> {
  return sql.begin(async (tx): Promise<ClaimResult> => {
    let endpointId: string;
    if ('deliveryId' in target) {
      const [row] = await tx<{ endpoint_id: string }[]>`select endpoint_id from webhook_deliveries where id = ${target.deliveryId}`;
      if (!row) return { kind: 'skipped', reason: 'gone' };
      endpointId = row.endpoint_id;
    } else {
      endpointId = target.endpointId;
    }
    // Serialises claims for one endpoint across replicas, so the concurrency check below is exact. An advisory lock
    // rather than the endpoint row: recording outcomes (which update the row) never waits for claims.
    await tx`select pg_advisory_xact_lock(${CLAIM_LOCK_SPACE}, hashtext(${endpointId}))`;
    const [endpoint] = await tx<EndpointLockRow[]>`
      select id, enabled, consecutive_failures, url, secret_encrypted, previous_secret_encrypted, previous_secret_expires_at
      from webhook_endpoints where id = ${endpointId}`;
    if (!endpoint) return { kind: 'skipped', reason: 'gone' };
    const which = 'deliveryId' in target ? tx`id = ${target.deliveryId}` : tx`endpoint_id = ${endpointId}`;
    if (!endpoint.enabled) {
      // Decisions §10: a disabled endpoint's deliveries are dead-lettered as they come due, for replay later.
      await tx`
        update webhook_deliveries set status = 'dead_lettered', dead_letter_reason = 'endpoint_disabled',
          next_attempt_at = null, queued_at = null, updated_at = date_trunc('milliseconds', now())
        where ${which} and status in ${tx(ACTIVE)} and next_attempt_at <= now()
          and (locked_until is null or locked_until < now())`;
      return { kind: 'skipped', reason: 'endpoint_disabled' };
    }
    const [inFlight] = await tx<{ leased: number }[]>`
      select count(*)::int as leased from webhook_deliveries where endpoint_id = ${endpointId} and locked_until > now()`;
    const leased = inFlight!.leased;
    const limit = endpoint.consecutive_failures > 0 ? 1 : opts.endpointConcurrency;
    if (leased >= limit) {
      // Forget the hint: the sweeper hints again once the endpoint has room, and finishing attempts pull the next.
      if ('deliveryId' in target) await tx`update webhook_deliveries set queued_at = null where id = ${target.deliveryId}`;
      return { kind: 'skipped', reason: 'endpoint_busy' };
    }
    const [claimed] = await tx<{ id: string; message_id: string; merchant_id: string; attempt_count: number }[]>`
      update webhook_deliveries set locked_until = now() + ${opts.leaseMs} * interval '1 millisecond',
        locked_by = ${opts.replicaId}, queued_at = null
      where id = (
        select id from webhook_deliveries
        where ${which} and status in ${tx(ACTIVE)} and next_attempt_at <= now()
          and (locked_until is null or locked_until < now())
        order by next_attempt_at, id
        limit 1
        for update skip locked)
      returning id, message_id, merchant_id, attempt_count`;
    if (!claimed) return { kind: 'skipped', reason: 'not_due' };
    const [message] = await tx<{ body: string }[]>`select body from webhook_messages where id = ${claimed.message_id}`;
    return {
      kind: 'claimed',
      delivery: {
        ...claimed,
        endpoint_id: endpointId,
        url: endpoint.url,
        secret_encrypted: endpoint.secret_encrypted,
        previous_secret_encrypted: endpoint.previous_secret_encrypted,
        previous_secret_expires_at: endpoint.previous_secret_expires_at,
        body: message!.body,
      },
    };
  });
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

/**
 * Writes the attempt and its consequences in one transaction: the attempt row, the delivery's new state (only while
 * this replica still holds the lease), and the endpoint's bookkeeping. Returns whether the endpoint is healthy, so
 * the caller may go on with its next due delivery.
 */
export async function recordAttempt(
  sql: Sql,
  delivery: ClaimedDelivery,
  outcome: AttemptOutcome,
  verdict: Verdict,
  replicaId: string,
): Promise<{ endpointDisabled: boolean }> {
  return sql.begin(async (tx) => {
    const [exists] = await tx`select 1 from webhook_deliveries where id = ${delivery.id}`;
    if (!exists) return { endpointDisabled: true }; // its endpoint was deleted meanwhile, with its deliveries
    await tx`
      insert into webhook_attempts (delivery_id, attempted_at, status_code, error, duration_ms, response_body)
      values (${delivery.id}, ${outcome.attemptedAt}, ${outcome.statusCode}, ${outcome.error}, ${outcome.durationMs}, ${outcome.responseBody})`;
    // Only while this replica still holds the lease: an attempt that outlived it must not overwrite a newer state.
    const mine = tx`id = ${delivery.id} and locked_by = ${replicaId}`;
    const release = tx`locked_until = null, locked_by = null, attempt_count = attempt_count + 1, updated_at = date_trunc('milliseconds', now())`;
    const endpointId = delivery.endpoint_id;
    switch (verdict.kind) {
      case 'succeeded': {
        await tx`update webhook_deliveries set ${release}, status = 'succeeded', next_attempt_at = null, dead_letter_reason = null where ${mine}`;
        // Touch the endpoint row only when something changes (or once a second for last_success_at), so that a busy
        // endpoint's successes do not queue up behind one another on its row lock.
        await tx`
          update webhook_endpoints set consecutive_failures = 0, last_success_at = now()
          where id = ${endpointId}
            and (consecutive_failures <> 0 or last_success_at is null or last_success_at < now() - interval '1 second')`;
        const [endpoint] = await tx<{ enabled: boolean }[]>`select enabled from webhook_endpoints where id = ${endpointId}`;
        return { endpointDisabled: !endpoint?.enabled };
      }
      case 'retry':
        await tx`update webhook_deliveries set ${release}, status = 'retrying',
          next_attempt_at = now() + ${verdict.delayMs} * interval '1 millisecond' where ${mine}`;
        break;
      case 'gone':
      case 'client_error':
      case 'max_attempts':
        await tx`update webhook_deliveries set ${release}, status = 'dead_lettered', next_attempt_at = null,
          dead_letter_reason = ${verdict.kind} where ${mine}`;
        break;
    }
    const [endpoint] = await tx<{ enabled: boolean; consecutive_failures: number; failure_threshold: number }[]>`
      update webhook_endpoints set consecutive_failures = consecutive_failures + 1 where id = ${endpointId}
      returning enabled, consecutive_failures, failure_threshold`;
    if (!endpoint) return { endpointDisabled: true };
    const disable = verdict.kind === 'gone' ? 'gone' : endpoint.consecutive_failures >= endpoint.failure_threshold ? 'failure_threshold' : null;
    if (disable && endpoint.enabled) {
      await tx`update webhook_endpoints set enabled = false, disabled_reason = ${disable}, updated_at = date_trunc('milliseconds', now())
        where id = ${endpointId}`;
    }
    if (verdict.kind === 'gone') {
      // The receiver says the endpoint is gone for good: nothing still waiting for it will be sent.
      await tx`
        update webhook_deliveries set status = 'dead_lettered', dead_letter_reason = 'endpoint_disabled', next_attempt_at = null,
          queued_at = null, updated_at = date_trunc('milliseconds', now())
        where endpoint_id = ${endpointId} and status in ${tx(ACTIVE)} and (locked_until is null or locked_until < now())`;
    }
    return { endpointDisabled: disable !== null || !endpoint.enabled };
  });
}

// ---- the sweeper -------------------------------------------------------------------------------------------------

/** Dead-letters the due deliveries of disabled endpoints in one statement (decisions §10). */
export async function deadLetterDueOfDisabled(sql: Sql): Promise<number> {
  const rows = await sql`
    update webhook_deliveries d set status = 'dead_lettered', dead_letter_reason = 'endpoint_disabled', next_attempt_at = null,
      queued_at = null, updated_at = date_trunc('milliseconds', now())
    from webhook_endpoints e
    where e.id = d.endpoint_id and not e.enabled
      and d.status in ${sql(ACTIVE)} and d.next_attempt_at <= now() and (d.locked_until is null or d.locked_until < now())
    returning d.id`;
  return rows.length;
}

/**
 * Marks as hinted, and returns, the deliveries that are due, unleased and not hinted recently: at most as many per
 * endpoint as it has room for, so a backlog of one endpoint neither floods the hint stream nor crowds out others.
 * The work is bounded per endpoint whatever its backlog: its room is computed once (busy rows counted up to the
 * concurrency limit, through the leased and hinted indexes), then only its first `free` due rows are read, in
 * order, through (endpoint_id, next_attempt_at). The conditions are checked again by the UPDATE under row locks,
 * so two sweepers never hint the same row twice.
 */
export async function markDueForHint(
  sql: Sql,
  opts: { requeueAfterMs: number; endpointConcurrency: number; batch: number },
): Promise<NewDelivery[]> {
  const requeue = sql`now() - ${opts.requeueAfterMs} * interval '1 millisecond'`;
  const due = sql`
    d.status in ${sql(ACTIVE)} and d.next_attempt_at <= now()
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
                  where x.endpoint_id = e.id and x.status in ${sql(ACTIVE)} and x.queued_at >= ${requeue}
                  limit ${opts.endpointConcurrency}) hinted) as free
      from webhook_endpoints e
      where e.enabled
        and exists (select 1 from webhook_deliveries d
                    where d.endpoint_id = e.id and d.status in ${sql(ACTIVE)} and d.next_attempt_at <= now())
    ),
    chosen as (
      select c.id, c.next_attempt_at
      from room r
      cross join lateral (
        select d.id, d.next_attempt_at from webhook_deliveries d
        where d.endpoint_id = r.endpoint_id and ${due}
        order by d.next_attempt_at, d.id
        limit greatest(r.free, 0)
      ) c
      order by c.next_attempt_at
      limit ${opts.batch}
    )
    update webhook_deliveries d set queued_at = now()
    from chosen where d.id = chosen.id and ${due}
    returning d.id, d.queued_at`;
  return rows.map((r) => ({ id: r.id, queuedAt: r.queued_at }));
}

/** Deletes messages (with their deliveries and attempts) older than the retention, unless still being delivered. */
export async function deleteExpired(sql: Sql, retentionDays: number): Promise<number> {
  const rows = await sql`
    delete from webhook_messages m
    where m.id in (
      select id from webhook_messages
      where created_at < now() - ${retentionDays} * interval '1 day'
        and not exists (select 1 from webhook_deliveries d where d.message_id = webhook_messages.id and d.status in ${sql(ACTIVE)})
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
