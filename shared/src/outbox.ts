import { type DomainEvent, type OutboxEventType } from './catalogue.ts';
import type { Queryable, Sql } from './db.ts';
import { newId } from './ids.ts';
import type { Logger } from './log.ts';
import { quotedName, startPartitionMaintenance, type PartitionedTable } from './partitions.ts';
import { startPeriodicPurge } from './purge.ts';
import type { Worker } from './worker.ts';
import { unnestColumns } from './unnest.ts';
import { carrierJson, carrierOf, type TraceCarrier } from './tracing/context.ts';

/** The channel a commit NOTIFYs when no relay runs in its process (outbox-relay.ts listens to it). */
export const NOTIFY_CHANNEL = 'outbox_pending';

/**
 * Records an event (a domain event, or an internal conversion event) in the caller's transaction. It reaches JetStream only after the transaction commits
 * (the relay reads committed rows), and a rolled-back change never emits its event. With tracing on, the row keeps
 * the active span's context, which the relay publishes with it.
 */
export async function enqueueEvent<D extends Record<string, unknown>, T extends OutboxEventType>(
  tx: Queryable,
  merchantId: string,
  type: T,
  data: D,
): Promise<DomainEvent<D, T>> {
  const id = newId('msg');
  const [row] = await tx<{ created_at: Date }[]>`
    insert into outbox (id, merchant_id, type, data, trace_context)
    values (${id}, ${merchantId}, ${type}, ${tx.json(data as never)}, ${carrierJson(carrierOf())}::jsonb)
    returning created_at`;
  await tx`select pg_notify(${NOTIFY_CHANNEL}, '')`;
  return { id, type, created_at: row!.created_at.toISOString(), merchant_id: merchantId, data };
}

/**
 * Records several events in the caller's transaction with one statement, in the order given (the relay publishes
 * by seq), and without NOTIFY: the caller calls `outboxCommitted` once its transaction has committed. The statement
 * is queued on the connection before this returns, so a COMMIT sent right after the call follows it in the same
 * round trip.
 *
 * Why no NOTIFY in the transaction: Postgres serialises the commits of all transactions that notified (a global
 * lock held from before the commit record until after its WAL flush), so on the hot paths every commit waited for
 * every other one's fsync; and one channel woke the relay of every service for every row.
 *
 * With tracing on, each row keeps a trace context for the relay to publish with it: the event's own `trace` when
 * given (the request it was written for, in a batch of many), else the active span's.
 */
export async function enqueueEvents(
  tx: Queryable,
  events: {
    merchantId: string;
    type: OutboxEventType;
    data: Record<string, unknown>;
    trace?: TraceCarrier | null;
  }[],
): Promise<DomainEvent<Record<string, unknown>, OutboxEventType>[]> {
  if (events.length === 0) return [];
  const active = carrierJson(carrierOf());
  const rows = new Array<OutboxInsert>(events.length);
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    rows[i] = {
      id: newId('msg'),
      merchantId: e.merchantId,
      type: e.type,
      data: e.data,
      traceContext: e.trace === undefined ? active : carrierJson(e.trace),
    };
  }
  const c = outboxColumns(rows);
  // Queued on the connection now (not when awaited), so that a COMMIT the caller sends right after follows it.
  const inserted = await tx<{ id: string; created_at: Date }[]>`
    insert into outbox (id, merchant_id, type, data, trace_context)
    select e.id, e.merchant_id, e.type, e.data::jsonb, e.trace_context::jsonb
    from unnest(${c.id}::text[], ${c.merchantId}::text[], ${c.type}::text[], ${c.data}::text[],
                ${c.traceContext}::text[])
      with ordinality as e(id, merchant_id, type, data, trace_context, n)
    order by e.n
    returning id, created_at`.execute();
  const createdAt = new Map<string, string>();
  for (const row of inserted) createdAt.set(row.id, row.created_at.toISOString());
  const recorded = new Array<DomainEvent<Record<string, unknown>, OutboxEventType>>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    recorded[i] = { id: r.id, type: r.type, created_at: createdAt.get(r.id)!, merchant_id: r.merchantId, data: r.data };
  }
  return recorded;
}

type OutboxInsert = {
  id: string;
  merchantId: string;
  type: OutboxEventType;
  data: Record<string, unknown>;
  /** The trace context as JSON text, null without one. */
  traceContext: string | null;
};

const outboxColumns = unnestColumns({
  id: (r: OutboxInsert) => r.id,
  merchantId: (r: OutboxInsert) => r.merchantId,
  type: (r: OutboxInsert) => r.type,
  data: (r: OutboxInsert) => JSON.stringify(r.data),
  traceContext: (r: OutboxInsert) => r.traceContext,
});

/** The wake-ups of the relays running in this process, by the pool they read (the pool the writers use too). */
const localRelays = new WeakMap<Sql, Set<() => void>>();
const notifying = new WeakSet<Sql>();

/**
 * Tells the outbox relay that rows written with `enqueueEvents` on this pool have been committed. A relay running
 * in this process on the same pool is woken directly (no round trip, and no other service's relay is disturbed);
 * without one, a NOTIFY (outside any transaction, at most one in flight) wakes the relays of other processes, which
 * otherwise find the rows at their next poll.
 */
export function outboxCommitted(sql: Sql): void {
  const relays = localRelays.get(sql);
  if (relays && relays.size > 0) {
    for (const wake of relays) wake();
    return;
  }
  if (notifying.has(sql)) return;
  notifying.add(sql);
  sql`select pg_notify(${NOTIFY_CHANNEL}, '')`.catch(() => {}).finally(() => notifying.delete(sql));
}

/** Registers a relay of this process reading `sql`, so that `outboxCommitted` wakes it directly; answers the unregister. */
export function registerLocalRelay(sql: Sql, wake: () => void): () => void {
  let wakes = localRelays.get(sql);
  if (!wakes) localRelays.set(sql, (wakes = new Set()));
  wakes.add(wake);
  return () => wakes.delete(wake);
}

/**
 * An outbox row's envelope as JSON text, built by Postgres: what the relay publishes, and what a consumer's
 * reconciler reads back from the outbox when the stream lost the message. The fields are those of DomainEvent;
 * created_at as toISOString prints it (stored to the ms).
 */
export function outboxEnvelope(sql: Queryable) {
  return sql`json_build_object('id', id, 'type', type,
    'created_at', to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'merchant_id', merchant_id, 'data', data)::text`;
}

/**
 * Deletes up to `limit` outbox rows published (or set aside: never publishable) more than `retentionDays` ago that
 * both reconcilers have passed: the dispatcher's (webhook_fanout_watermark, every row) and the commissions service's
 * (conversion_reconcile_watermark, conversion.recorded rows). A reconciler that is not running holds its watermark,
 * and with it the rows it has yet to check. Oldest first; rows another replica is deleting are skipped. A row is
 * published or set aside after it was written: the condition on created_at, implied, confines the statement to the
 * partitions that can hold such rows (those wholly past it are dropped: outboxPartitions).
 */
export async function pruneOutbox(sql: Sql, retentionDays: number, limit: number): Promise<number> {
  const deleted = await sql`
    delete from outbox where created_at < now() - ${retentionDays} * interval '1 day' and seq in (
      select seq from outbox
      where created_at < now() - ${retentionDays} * interval '1 day'
        and coalesce(published_at, set_aside_at) < now() - ${retentionDays} * interval '1 day'
        and seq <= (select seq from webhook_fanout_watermark)
        and seq <= (select seq from conversion_reconcile_watermark)
      order by seq
      limit ${limit}
      for update skip locked)`;
  return deleted.count;
}

/**
 * The outbox is partitioned by day on created_at; a week of partitions is made ahead. A day past the retention is
 * dropped whole once every row of it is published (or set aside) and both reconcilers have passed it; its seq and
 * id are indexed in each partition (the parent cannot declare them without created_at). Each day is vacuumed as the
 * table was (migration 008): the relay reads its index of unpublished rows on every wake-up.
 */
export const outboxPartitions: PartitionedTable = {
  table: 'outbox',
  period: 'day',
  keyType: 'timestamptz',
  ahead: 7,
  partitionIndexes: [
    { suffix: 'seq', columns: 'seq' },
    { suffix: 'id', columns: 'id' },
  ],
  storage:
    'autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000, ' +
    'autovacuum_analyze_scale_factor = 0.01, autovacuum_analyze_threshold = 1000',
};

/** Whether a partition of the outbox holds a row a relay or a reconciler has yet to read. */
async function outboxPartitionNeeded(tx: Queryable, partition: string): Promise<boolean> {
  const [row] = await tx.unsafe<{ needed: boolean }[]>(
    `select exists (select 1 from ${quotedName(partition)}
       where (published_at is null and set_aside_at is null)
          or seq > (select seq from webhook_fanout_watermark)
          or seq > (select seq from conversion_reconcile_watermark)) as needed`,
  );
  return row!.needed;
}

/**
 * Makes the outbox's partitions ahead and drops the days past `retentionDays` (outboxPartitions), and deletes the
 * published rows past it in the day that straddles it (pruneOutbox), at start and then hourly, 5,000 per statement.
 */
export function startOutboxPurge(sql: Sql, log: Logger, retentionDays: number): Worker {
  const partitions = startPartitionMaintenance({
    sql,
    log,
    tables: [{ spec: outboxPartitions, retentionDays, stillNeeded: outboxPartitionNeeded }],
  });
  const purge = startPeriodicPurge({
    what: 'published outbox rows',
    log,
    batch: 5000,
    fields: { retention_days: retentionDays },
    deleteBatch: (limit) => pruneOutbox(sql, retentionDays, limit),
  });
  return {
    async stop() {
      await purge.stop();
      await partitions.stop();
    },
  };
}

/**
 * Seconds since the oldest outbox row still unpublished was written (0 when none): the relay's, or JetStream's,
 * stall. A row set aside (it can never be published: outbox_set_aside_total counts those) is not waiting.
 */
export async function oldestUnpublishedAgeSeconds(sql: Sql): Promise<number> {
  const [row] = await sql<{ age: number }[]>`
    select coalesce(extract(epoch from now() - (
      select created_at from outbox where published_at is null and set_aside_at is null order by seq limit 1)), 0)::float8 as age`;
  return row!.age;
}
