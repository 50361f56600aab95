import { headers, type MsgHdrs } from '@nats-io/nats-core';
import { createInbox, type NatsConnection } from '@nats-io/transport-node';
import { outboxSubject, type DomainEvent, type OutboxEventType } from './catalogue.ts';
import type { Queryable, Sql } from './db.ts';
import { newId } from './ids.ts';
import { createBatcher } from './batcher.ts';
import type { Logger } from './log.ts';
import { startPeriodicPurge } from './purge.ts';
import type { Worker } from './service.ts';
import { inTransaction } from './transactions.ts';
import { unnestColumns } from './unnest.ts';
import { carrierJson, carrierOf, endSpans, type Span, type TraceCarrier } from './tracing/context.ts';
import { storedContextHeaders } from './tracing/nats.ts';

const NOTIFY_CHANNEL = 'outbox_pending';

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

export interface OutboxRelay {
  /** Publishes everything pending now; resolves with how many rows it published. */
  flush(): Promise<number>;
  stop(): Promise<void>;
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

interface OutboxRow {
  id: string;
  type: OutboxEventType;
  /** The DomainEvent envelope as JSON text, built by Postgres from the row: no parse and re-encode per event. */
  envelope: string;
  /** The writer's trace context (published in the message's headers), null without one. */
  trace_context: TraceCarrier | null;
}

/** A message the relay publishes: its subject, bytes, Nats-Msg-Id, and the headers of its trace context if any. */
interface OutboxMessage {
  subject: string;
  data: Uint8Array;
  msgId: string;
  headers: MsgHdrs | undefined;
}

/**
 * Deletes up to `limit` outbox rows published more than `retentionDays` ago that both reconcilers have passed: the
 * dispatcher's (webhook_fanout_watermark, every row) and the commissions service's (conversion_reconcile_watermark,
 * conversion.recorded rows). A reconciler that is not running holds its watermark, and with it the rows it has yet to
 * check. Oldest first; rows another replica is deleting are skipped.
 */
export async function pruneOutbox(sql: Sql, retentionDays: number, limit: number): Promise<number> {
  const deleted = await sql`
    delete from outbox where seq in (
      select seq from outbox
      where published_at < now() - ${retentionDays} * interval '1 day'
        and seq <= (select seq from webhook_fanout_watermark)
        and seq <= (select seq from conversion_reconcile_watermark)
      order by seq
      limit ${limit}
      for update skip locked)`;
  return deleted.count;
}

/** Deletes published rows past `retentionDays` (pruneOutbox), at start and then hourly, 5,000 per statement. */
export function startOutboxPurge(sql: Sql, log: Logger, retentionDays: number): Worker {
  return startPeriodicPurge({
    what: 'published outbox rows',
    log,
    batch: 5000,
    fields: { retention_days: retentionDays },
    deleteBatch: (limit) => pruneOutbox(sql, retentionDays, limit),
  });
}

/** How long the relay waits for JetStream to acknowledge a batch before it gives up and retries the batch. */
const ACK_TIMEOUT_MS = 5000;

/** The messages of one publishAll call that JetStream has yet to acknowledge. */
interface PendingBatch {
  remaining: number;
  tokens: string[];
  timer: NodeJS.Timeout | undefined;
  resolve: () => void;
  reject: (refusal: Error) => void;
}

/**
 * Publishes to JetStream and waits for its acknowledgements, many messages at a time: one subscription to a
 * wildcard inbox for every acknowledgement, and one timer per batch. The client's `js.publish` makes a request per
 * message, with a timer and an Error carrying a captured stack for each, even for one that succeeds: that was a
 * tenth of the events service's CPU. Messages published together leave in one socket write. The functions that run
 * per message are made once per publisher, not per batch (unnest.ts says why).
 */
function createJetStreamPublisher(nc: NatsConnection) {
  const inbox = createInbox();
  const waiting = new Map<string, PendingBatch>();
  let next = 0;
  const finish = (batch: PendingBatch, refusal: Error | null) => {
    clearTimeout(batch.timer);
    for (const t of batch.tokens) waiting.delete(t);
    if (refusal) batch.reject(refusal);
    else batch.resolve();
  };
  const timedOut = (batch: PendingBatch) =>
    finish(batch, new Error(`JetStream did not acknowledge ${batch.remaining} messages within ${ACK_TIMEOUT_MS} ms`));
  const subscription = nc.subscribe(`${inbox}.*`, {
    callback: (err, msg) => {
      if (err) {
        for (const batch of new Set(waiting.values())) finish(batch, err);
        return;
      }
      const token = msg.subject.slice(inbox.length + 1);
      const batch = waiting.get(token);
      if (!batch) return; // after its batch timed out or was refused
      waiting.delete(token);
      const refusal = pubAckRefusal(msg.data, msg.headers?.code);
      if (refusal) finish(batch, refusal);
      else if (--batch.remaining === 0) finish(batch, null);
    },
  });
  return {
    /**
     * Publishes every message with its Nats-Msg-Id; resolves once JetStream has acknowledged each one (stored, or a
     * duplicate it had stored before), rejects at the first refusal or after ACK_TIMEOUT_MS.
     */
    publishAll(messages: OutboxMessage[]): Promise<void> {
      if (messages.length === 0) return Promise.resolve();
      const batch: PendingBatch = {
        remaining: messages.length,
        tokens: [],
        timer: undefined,
        resolve: noop,
        reject: noop,
      };
      const acknowledged = new Promise<void>((resolve, reject) => {
        batch.resolve = resolve;
        batch.reject = reject;
      });
      batch.timer = setTimeout(timedOut, ACK_TIMEOUT_MS, batch);
      try {
        for (const m of messages) {
          const token = (next++).toString(36);
          batch.tokens.push(token);
          waiting.set(token, batch);
          const h = m.headers ?? headers();
          h.set('Nats-Msg-Id', m.msgId);
          nc.publish(m.subject, m.data, { reply: `${inbox}.${token}`, headers: h });
        }
      } catch (err) {
        finish(batch, err as Error);
      }
      return acknowledged;
    },
    close() {
      subscription.unsubscribe();
    },
  };
}

const noop = () => {};

/** Null for a JetStream publish acknowledgement; the reason for anything else. */
function pubAckRefusal(data: Uint8Array, statusCode: number | undefined): Error | null {
  // No stream listens on the subject: the server answers with an empty 503 status message.
  if (data.length === 0) return new Error(`JetStream did not take the message (status ${statusCode ?? 'none'})`);
  let ack: { stream?: string; error?: { description?: string } };
  try {
    ack = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as typeof ack;
  } catch {
    return new Error('JetStream answered with something that is not an acknowledgement');
  }
  if (ack.error) return new Error(`JetStream refused the message: ${ack.error.description ?? 'no reason given'}`);
  if (!ack.stream) return new Error('JetStream answered with an acknowledgement naming no stream');
  return null;
}

/**
 * Publishes committed outbox rows to their streams (catalogue.outboxSubject), oldest first, and marks them published.
 * Rows are claimed with FOR UPDATE SKIP LOCKED, so relays in several replicas share the work. A row is marked
 * published by the statement that claims it, and that transaction commits only after JetStream acknowledged every
 * row of the batch; a crash or a refusal before the commit rolls the mark back and re-publishes the rows later, and
 * Nats-Msg-Id (the envelope id) makes JetStream store each once. Woken by `outboxCommitted` in its own process, by
 * NOTIFY (enqueueEvent, or a process without a relay), and by a timer in case a wake-up was missed. Wake-ups are
 * batched (batcher.ts): a pass starts no sooner than `minIntervalMs` after the previous one started, so that under a
 * steady load one pass claims, publishes and marks the rows of many commits instead of each commit's one or two;
 * `flush()` starts a pass at once unless one is in progress, and answers how many rows its pass published.
 */
export function startOutboxRelay(opts: {
  sql: Sql;
  nc: NatsConnection;
  prefix: string;
  log: Logger;
  batchSize?: number;
  pollMs?: number;
  /** Least time between the starts of two passes woken by commits (default 0: every wake-up). */
  minIntervalMs?: number;
  /**
   * Called when a pass could not publish (JetStream refused, or did not answer): the stream may be gone, and the
   * topology check recreates it at once rather than at its next interval. The rows stay unpublished meanwhile.
   */
  onRefused?: () => void;
}): OutboxRelay {
  const { sql, nc, prefix, log } = opts;
  const publisher = createJetStreamPublisher(nc);
  const batchSize = opts.batchSize ?? 200;
  let stopped = false;

  /**
   * One batch in two round trips to Postgres: BEGIN with the statement that claims the oldest unpublished rows and
   * marks them published (the mark holds only if this transaction commits, after JetStream acknowledged every row),
   * then COMMIT. Made once per relay, like everything that runs per row here (unnest.ts says why).
   */
  const claimAndPublish = async (tx: Queryable, begun: Promise<unknown>) => {
    const [, rows] = await Promise.all([
      begun,
      tx<OutboxRow[]>`
        with claimed as (
          update outbox set published_at = now()
          where seq in (
            select seq from outbox
            where published_at is null
            order by seq
            limit ${batchSize}
            for update skip locked)
          returning seq, id, type, ${outboxEnvelope(tx)} as envelope, trace_context)
        select id, type, envelope, trace_context from claimed order by seq`.execute(),
    ]);
    if (rows.length > 0) {
      const messages = new Array<OutboxMessage>(rows.length);
      // With tracing on, a producer span per row that kept a trace context, ended once JetStream acknowledged it.
      const spans: Span[] = [];
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!;
        const subject = outboxSubject(prefix, row.type);
        const headers = storedContextHeaders(subject, row.trace_context, row.id, spans);
        messages[i] = { subject, data: Buffer.from(row.envelope), msgId: row.id, headers };
      }
      try {
        await publisher.publishAll(messages);
      } catch (err) {
        endSpans(spans, err);
        throw err;
      }
      endSpans(spans);
    }
    return { result: rows.length, last: Promise.resolve() };
  };
  const publishBatch = () => inTransaction(sql, claimAndPublish);

  /** One pass: batches until what is committed is published; a refusal ends it, and the next wake-up retries. */
  const publishCommitted = async (): Promise<number> => {
    let total = 0;
    try {
      let n: number;
      do {
        n = await publishBatch();
        total += n;
      } while (n === batchSize && !stopped);
    } catch (err) {
      log.warn('outbox relay could not publish; will retry', { err });
      opts.onRefused?.();
    }
    if (total > 0) log.debug('outbox relay published', { count: total });
    return total;
  };

  // One pass at a time; wake-ups that come during a pass are answered by the next one, which then covers every row
  // they committed. An item is a wake-up, or a `flush` waiting to hear how many rows its pass published.
  type WakeUp = ((published: number) => void) | null;
  const passes = createBatcher<WakeUp>(
    { slots: 1, largestBatch: Infinity, leastIntervalMs: opts.minIntervalMs ?? 0 },
    async (wakeUps) => {
      const published = await publishCommitted();
      for (const answer of wakeUps) answer?.(published);
    },
    () => {}, // publishCommitted does not throw
  );
  const flush = () =>
    stopped
      ? Promise.resolve(0)
      : new Promise<number>((resolve) => {
          passes.add(resolve);
          passes.startNow();
        });

  const timer = setInterval(() => void flush(), opts.pollMs ?? 1000);
  timer.unref();
  const wake = () => passes.add(null);
  let wakes = localRelays.get(sql);
  if (!wakes) localRelays.set(sql, (wakes = new Set()));
  wakes.add(wake);
  const listening = sql.listen(NOTIFY_CHANNEL, wake).catch((err) => {
    log.warn('outbox relay could not LISTEN; polling only', { err });
    return null;
  });
  void flush();

  return {
    flush,
    async stop() {
      stopped = true;
      clearInterval(timer);
      wakes.delete(wake);
      // Unlisten first, whatever is in flight: the work may be stuck on a database that has gone away, and then the
      // pool is closed under it (the drain bound in service.ts); no LISTEN should be left open when that happens.
      const l = await listening;
      await l?.unlisten().catch(() => {});
      for (const answer of await passes.stop()) answer?.(0);
      publisher.close();
    },
  };
}

/** Seconds since the oldest outbox row still unpublished was written (0 when none): the relay's, or JetStream's, stall. */
export async function oldestUnpublishedAgeSeconds(sql: Sql): Promise<number> {
  const [row] = await sql<{ age: number }[]>`
    select coalesce(extract(epoch from now() - (select created_at from outbox where published_at is null order by seq limit 1)), 0)::float8 as age`;
  return row!.age;
}
