import { headers, type MsgHdrs } from '@nats-io/nats-core';
import type { NatsConnection } from '@nats-io/transport-node';
import { Counter, type Registry } from 'prom-client';
import { createBatcher } from './batcher.ts';
import { outboxSubject, type OutboxEventType } from './catalogue.ts';
import type { Queryable, Sql } from './db.ts';
import type { Logger } from './log.ts';
import { natsInbox } from './nats.ts';
import { NOTIFY_CHANNEL, outboxEnvelope, registerLocalRelay } from './outbox.ts';
import { inTransaction } from './transactions.ts';
import { endSpans, type Span, type TraceCarrier } from './tracing/context.ts';
import { storedContextHeaders } from './tracing/nats.ts';

export interface OutboxRelay {
  /** Publishes everything pending now; resolves with how many rows it published. */
  flush(): Promise<number>;
  stop(): Promise<void>;
}

interface OutboxRow {
  id: string;
  merchant_id: string;
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

/** How long the relay waits for JetStream to acknowledge a batch before it gives up and retries the batch. */
const ACK_TIMEOUT_MS = 5000;

/** A message of a batch that can never be published as it is (too large): its index in the batch and why. */
interface SetAside {
  index: number;
  reason: string;
}

/** The messages of one publishAll call that JetStream has yet to acknowledge. */
interface PendingBatch {
  remaining: number;
  /** The token of the batch's first message: tokens are consecutive numbers within a batch, so a token gives its index. */
  base: number;
  tokens: string[];
  setAside: SetAside[];
  timer: NodeJS.Timeout | undefined;
  resolve: (setAside: SetAside[]) => void;
  reject: (refusal: Error) => void;
}

/**
 * JetStream's refusal of one message that no retry can change: the message is larger than the stream's
 * max_msg_size (err_code 10054). Other refusals (no stream, a full stream, a leader election) pass.
 */
class PermanentRefusal extends Error {}
const PERMANENT_ERR_CODES = new Set([10054]);

/**
 * Publishes to JetStream and waits for its acknowledgements, many messages at a time: one subscription to a
 * wildcard inbox for every acknowledgement, and one timer per batch. The client's `js.publish` makes a request per
 * message, with a timer and an Error carrying a captured stack for each, even for one that succeeds: that was a
 * tenth of the events service's CPU. Messages published together leave in one socket write. The functions that run
 * per message are made once per publisher, not per batch (unnest.ts says why).
 */
function createJetStreamPublisher(nc: NatsConnection) {
  const inbox = natsInbox(nc);
  const waiting = new Map<string, PendingBatch>();
  let next = 0;
  const finish = (batch: PendingBatch, refusal: Error | null) => {
    clearTimeout(batch.timer);
    for (const t of batch.tokens) waiting.delete(t);
    if (refusal) batch.reject(refusal);
    else batch.resolve(batch.setAside);
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
      if (refusal instanceof PermanentRefusal) {
        batch.setAside.push({ index: parseInt(token, 36) - batch.base, reason: refusal.message });
      } else if (refusal) {
        finish(batch, refusal);
        return;
      }
      if (--batch.remaining === 0) finish(batch, null);
    },
  });
  return {
    /**
     * Publishes every message with its Nats-Msg-Id; resolves once JetStream has acknowledged each one (stored, or a
     * duplicate it had stored before) or refused it for good, with those it refused for good (set aside by the
     * caller); rejects at the first other refusal or after ACK_TIMEOUT_MS. A message larger than the server's
     * max_payload is refused by the client before it is sent, and is set aside the same way.
     */
    publishAll(messages: OutboxMessage[]): Promise<SetAside[]> {
      if (messages.length === 0) return Promise.resolve([]);
      const batch: PendingBatch = {
        remaining: messages.length,
        base: next,
        tokens: [],
        setAside: [],
        timer: undefined,
        resolve: noop,
        reject: noop,
      };
      const acknowledged = new Promise<SetAside[]>((resolve, reject) => {
        batch.resolve = resolve;
        batch.reject = reject;
      });
      batch.timer = setTimeout(timedOut, ACK_TIMEOUT_MS, batch);
      try {
        for (let i = 0; i < messages.length; i++) {
          const m = messages[i]!;
          const token = (next++).toString(36);
          const h = m.headers ?? headers();
          h.set('Nats-Msg-Id', m.msgId);
          const tooLarge = oversize(nc, m.data, h);
          if (tooLarge) {
            batch.setAside.push({ index: i, reason: tooLarge });
            batch.remaining--;
            continue;
          }
          batch.tokens.push(token);
          waiting.set(token, batch);
          nc.publish(m.subject, m.data, { reply: `${inbox}.${token}`, headers: h });
        }
        if (batch.remaining === 0) finish(batch, null);
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

/**
 * Why the message cannot be published (its bytes and headers exceed the server's max_payload, which the client
 * would refuse by throwing), or null. Checked before publishing: a throw would fail the whole batch, every pass.
 */
function oversize(nc: NatsConnection, data: Uint8Array, h: MsgHdrs): string | null {
  const max = nc.info?.max_payload;
  if (max === undefined || data.length < max - HEADERS_ALLOWANCE) return null;
  let size = data.length + HEADERS_FRAME.length;
  for (const [key, values] of h) for (const v of values) size += Buffer.byteLength(`${key}: ${v}\r\n`);
  return size > max ? `${size} bytes exceed the NATS server's max_payload of ${max} bytes` : null;
}

/** A row set aside by a batch: the row, its size as published, why. */
interface RowSetAside {
  row: OutboxRow;
  bytes: number;
  reason: string;
}

/**
 * Unmarks the rows that can never be published and records why, in the claiming transaction. The reconcilers that
 * read the outbox still fan a set-aside domain event out to webhooks, or process a set-aside conversion, once.
 */
function markSetAside(tx: Queryable, aside: RowSetAside[]) {
  const ids = aside.map((a) => a.row.id);
  const reasons = aside.map((a) => a.reason);
  return tx`
    update outbox o set published_at = null, set_aside_at = now(), set_aside_reason = s.reason
    from unnest(${ids}::text[], ${reasons}::text[]) as s(id, reason)
    where o.id = s.id`.execute();
}

/** The bytes around NATS headers: the version line and the blank line that ends them. */
const HEADERS_FRAME = 'NATS/1.0\r\n\r\n';

/** Below max_payload by more than this, a message is not measured with its headers (a trace context and an id). */
const HEADERS_ALLOWANCE = 4096;

/** Null for a JetStream publish acknowledgement; the reason for anything else. */
function pubAckRefusal(data: Uint8Array, statusCode: number | undefined): Error | null {
  // No stream listens on the subject: the server answers with an empty 503 status message.
  if (data.length === 0) return new Error(`JetStream did not take the message (status ${statusCode ?? 'none'})`);
  let ack: { stream?: string; error?: { description?: string; err_code?: number } };
  try {
    ack = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as typeof ack;
  } catch {
    return new Error('JetStream answered with something that is not an acknowledgement');
  }
  if (ack.error) {
    const reason = `JetStream refused the message: ${ack.error.description ?? 'no reason given'}`;
    return PERMANENT_ERR_CODES.has(ack.error.err_code ?? 0) ? new PermanentRefusal(reason) : new Error(reason);
  }
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
  /** Where `outbox_set_aside_total` is registered (none: not counted). */
  registry?: Registry;
}): OutboxRelay {
  const { sql, nc, prefix, log } = opts;
  const publisher = createJetStreamPublisher(nc);
  const setAsideTotal = opts.registry
    ? new Counter({
        name: 'outbox_set_aside_total',
        // No labels: the series exists (at 0) from the start, for the alert to compare; the log line names the row.
        help: 'Outbox rows the relay set aside because they can never be published (too large, refused for good)',
        registers: [opts.registry],
      })
    : null;
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
            where published_at is null and set_aside_at is null
            order by seq
            limit ${batchSize}
            for update skip locked)
          returning seq, id, merchant_id, type, ${outboxEnvelope(tx)} as envelope, trace_context)
        select id, merchant_id, type, envelope, trace_context from claimed order by seq`.execute(),
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
      let setAside: SetAside[];
      try {
        setAside = await publisher.publishAll(messages);
      } catch (err) {
        endSpans(spans, err);
        throw err;
      }
      endSpans(spans);
      if (setAside.length > 0) {
        // In the claiming transaction: these rows leave the relay's queue for good, the rest commit as published.
        const aside = setAside.map((s) => ({ row: rows[s.index]!, bytes: messages[s.index]!.data.length, ...s }));
        return { result: { claimed: rows.length, aside }, last: markSetAside(tx, aside) };
      }
    }
    return { result: { claimed: rows.length, aside: [] }, last: Promise.resolve() };
  };
  const publishBatch = () => inTransaction(sql, claimAndPublish);

  /** One pass: batches until what is committed is published; a refusal ends it, and the next wake-up retries. */
  const publishCommitted = async (): Promise<number> => {
    let total = 0;
    try {
      let batch: { claimed: number; aside: RowSetAside[] };
      do {
        batch = await publishBatch();
        total += batch.claimed - batch.aside.length;
        // Once committed: a pass that fails before its commit sets nothing aside (the next one finds the rows again).
        for (const a of batch.aside) {
          log.error('outbox row set aside: it can never be published', {
            outbox_id: a.row.id,
            merchant_id: a.row.merchant_id,
            type: a.row.type,
            bytes: a.bytes,
            reason: a.reason,
          });
          setAsideTotal?.inc();
        }
      } while (batch.claimed === batchSize && !stopped);
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
  const unregister = registerLocalRelay(sql, wake);
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
      unregister();
      // Unlisten first, whatever is in flight: the work may be stuck on a database that has gone away, and then the
      // pool is closed under it (the drain bound in service.ts); no LISTEN should be left open when that happens.
      const l = await listening;
      await l?.unlisten().catch(() => {});
      for (const answer of await passes.stop()) answer?.(0);
      publisher.close();
    },
  };
}
