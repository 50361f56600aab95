import { headers } from '@nats-io/nats-core';
import { createInbox, type NatsConnection } from '@nats-io/transport-node';
import { outboxSubject, type DomainEvent, type OutboxEventType } from './catalogue.ts';
import type { Queryable, Sql } from './db.ts';
import { newId } from './ids.ts';
import { createPacer } from './pacer.ts';
import type { Logger } from './log.ts';
import { startPeriodicPurge } from './purge.ts';
import type { Worker } from './service.ts';
import { inTransaction } from './transactions.ts';

const NOTIFY_CHANNEL = 'outbox_pending';

/**
 * Records an event (a domain event, or an internal conversion event) in the caller's transaction. It reaches JetStream only after the transaction commits
 * (the relay reads committed rows), and a rolled-back change never emits its event.
 */
export async function enqueueEvent<D extends Record<string, unknown>, T extends OutboxEventType>(
  tx: Queryable,
  merchantId: string,
  type: T,
  data: D,
): Promise<DomainEvent<D, T>> {
  const id = newId('msg');
  const [row] = await tx<{ created_at: Date }[]>`
    insert into outbox (id, merchant_id, type, data)
    values (${id}, ${merchantId}, ${type}, ${tx.json(data as never)})
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
 */
export async function enqueueEvents(
  tx: Queryable,
  events: { merchantId: string; type: OutboxEventType; data: Record<string, unknown> }[],
): Promise<DomainEvent<Record<string, unknown>, OutboxEventType>[]> {
  if (events.length === 0) return [];
  const ids = events.map(() => newId('msg'));
  // Queued on the connection now (not when awaited), so that a COMMIT the caller sends right after follows it.
  const rows = await tx<{ id: string; created_at: Date }[]>`
    insert into outbox (id, merchant_id, type, data)
    select e.id, e.merchant_id, e.type, e.data::jsonb
    from unnest(${ids}::text[], ${events.map((e) => e.merchantId)}::text[], ${events.map((e) => e.type)}::text[],
                ${events.map((e) => JSON.stringify(e.data))}::text[]) with ordinality as e(id, merchant_id, type, data, n)
    order by e.n
    returning id, created_at`.execute();
  const createdAt = new Map(rows.map((r) => [r.id, r.created_at.toISOString()]));
  return events.map((e, i) => ({ id: ids[i]!, type: e.type, created_at: createdAt.get(ids[i]!)!, merchant_id: e.merchantId, data: e.data }));
}

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
  sql`select pg_notify(${NOTIFY_CHANNEL}, '')`
    .catch(() => {})
    .finally(() => notifying.delete(sql));
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
  seq: string;
  id: string;
  type: OutboxEventType;
  /** The DomainEvent envelope as JSON text, built by Postgres from the row: no parse and re-encode per event. */
  envelope: string;
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

/**
 * Publishes to JetStream and waits for its acknowledgements, many messages at a time: one subscription to a
 * wildcard inbox for every acknowledgement, and one timer per batch. The client's `js.publish` makes a request per
 * message, with a timer and an Error carrying a captured stack for each, even for one that succeeds: that was a
 * tenth of the events service's CPU. Messages published together leave in one socket write.
 */
function createJetStreamPublisher(nc: NatsConnection) {
  const inbox = createInbox();
  const waiting = new Map<string, (refusal: Error | null) => void>();
  let next = 0;
  const subscription = nc.subscribe(`${inbox}.*`, {
    callback: (err, msg) => {
      if (err) {
        for (const settle of waiting.values()) settle(err);
        waiting.clear();
        return;
      }
      const token = msg.subject.slice(inbox.length + 1);
      const settle = waiting.get(token);
      if (!settle) return; // after its batch timed out
      waiting.delete(token);
      settle(pubAckRefusal(msg.data, msg.headers?.code));
    },
  });
  return {
    /**
     * Publishes every message with its Nats-Msg-Id; resolves once JetStream has acknowledged each one (stored, or a
     * duplicate it had stored before), rejects at the first refusal or after ACK_TIMEOUT_MS.
     */
    publishAll(messages: { subject: string; data: Uint8Array; msgId: string }[]): Promise<void> {
      if (messages.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const tokens: string[] = [];
        let remaining = messages.length;
        const timer = setTimeout(() => finish(new Error(`JetStream did not acknowledge ${remaining} messages within ${ACK_TIMEOUT_MS} ms`)), ACK_TIMEOUT_MS);
        const finish = (refusal: Error | null) => {
          clearTimeout(timer);
          for (const t of tokens) waiting.delete(t);
          if (refusal) reject(refusal);
          else resolve();
        };
        const acknowledged = (refusal: Error | null) => {
          if (refusal) finish(refusal);
          else if (--remaining === 0) finish(null);
        };
        try {
          for (const m of messages) {
            const token = (next++).toString(36);
            tokens.push(token);
            waiting.set(token, acknowledged);
            const h = headers();
            h.set('Nats-Msg-Id', m.msgId);
            nc.publish(m.subject, m.data, { reply: `${inbox}.${token}`, headers: h });
          }
        } catch (err) {
          finish(err as Error);
        }
      });
    },
    close() {
      subscription.unsubscribe();
    },
  };
}

/** Null for a JetStream publish acknowledgement; the reason for anything else. */
function pubAckRefusal(data: Uint8Array, statusCode: number | undefined): Error | null {
  // No stream listens on the subject: the server answers with an empty 503 status message.
  if (data.length === 0) return new Error(`JetStream did not take the message (status ${statusCode ?? 'none'})`);
  let ack: { stream?: string; error?: { description?: string } };
  try {
    ack = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
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
 * published only in the transaction that claimed it and only after JetStream acknowledged every row of the batch;
 * a crash or a refusal before the mark re-publishes the rows later, and Nats-Msg-Id (the envelope id) makes
 * JetStream store each once. Woken by `outboxCommitted` in its own process, by NOTIFY (enqueueEvent, or a process
 * without a relay), and by a timer in case a wake-up was missed. Wake-ups are paced (pacer.ts): a pass starts no
 * sooner than `minIntervalMs` after the previous one started, so that under a steady load one pass claims, publishes
 * and marks the rows of many commits instead of each commit's one or two; `flush()` itself is never held back.
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
}): OutboxRelay {
  const { sql, nc, prefix, log } = opts;
  const publisher = createJetStreamPublisher(nc);
  const batchSize = opts.batchSize ?? 200;
  let stopped = false;
  let running: Promise<number> | null = null;
  let again = false;

  /** One batch in two round trips to Postgres rather than four: BEGIN with the claiming SELECT, the UPDATE with COMMIT. */
  const publishBatch = () =>
    inTransaction(sql, async (tx, begun) => {
      const [, rows] = await Promise.all([
        begun,
        tx<OutboxRow[]>`
          select seq, id, type, ${outboxEnvelope(tx)} as envelope
          from outbox
          where published_at is null
          order by seq
          limit ${batchSize}
          for update skip locked`.execute(),
      ]);
      if (rows.length === 0) return { result: 0, last: Promise.resolve() };
      await publisher.publishAll(rows.map((row) => ({ subject: outboxSubject(prefix, row.type), data: Buffer.from(row.envelope), msgId: row.id })));
      // A list of n values rather than one array parameter: with `seq = any($1)` Postgres re-planned the statement on
      // every call (its generic plan costed the array at 10 elements, dearer than a custom plan for the one or two
      // a batch usually has), while each list length gets a generic plan of its own after five runs.
      return { result: rows.length, last: tx`update outbox set published_at = now() where seq in ${tx(rows.map((r) => r.seq))}`.execute() };
    });

  const flush = async (): Promise<number> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let total = 0;
      try {
        do {
          again = false;
          let n: number;
          do {
            n = await publishBatch();
            total += n;
          } while (n === batchSize && !stopped);
        } while (again && !stopped);
      } catch (err) {
        log.warn('outbox relay could not publish; will retry', { err: (err as Error).message });
      } finally {
        running = null;
      }
      if (total > 0) log.debug('outbox relay published', { count: total });
      return total;
    })();
    return running;
  };

  const timer = setInterval(() => void flush(), opts.pollMs ?? 1000);
  timer.unref();
  const pacer = createPacer(opts.minIntervalMs ?? 0, () => void flush());
  const wake = () => pacer.kick();
  let wakes = localRelays.get(sql);
  if (!wakes) localRelays.set(sql, (wakes = new Set()));
  wakes.add(wake);
  const listening = sql.listen(NOTIFY_CHANNEL, wake).catch((err) => {
    log.warn('outbox relay could not LISTEN; polling only', { err: (err as Error).message });
    return null;
  });
  void flush();

  return {
    flush,
    async stop() {
      stopped = true;
      clearInterval(timer);
      pacer.stop();
      wakes.delete(wake);
      // Unlisten first, whatever is in flight: the work may be stuck on a database that has gone away, and then the
      // pool is closed under it (the drain bound in service.ts); no LISTEN should be left open when that happens.
      const l = await listening;
      await l?.unlisten().catch(() => {});
      if (running) await running;
      publisher.close();
    },
  };
}
