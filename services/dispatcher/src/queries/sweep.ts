import type { Queryable, Sql } from '@platform/shared/db';
import type { NewDelivery } from './fan-out.ts';
import { ACTIVE_SQL, activeById } from './planner.ts';

/**
 * Dead-letters the due deliveries of disabled endpoints in one statement. It runs on every sweep, and
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

/**
 * For work created where no hint can be published (the operator CLI has no NATS connection): clearing queued_at
 * lets the sweeper hint these deliveries on its next pass instead of after WEBHOOK_REQUEUE_AFTER_MS.
 */
export async function forgetHints(sql: Queryable, deliveries: NewDelivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  await sql`update webhook_deliveries set queued_at = null where id in ${sql(deliveries.map((d) => d.id))} and locked_until is null`;
}
