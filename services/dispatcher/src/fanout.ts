import type { JsMsg } from '@nats-io/jetstream';
import { carrierJson, carrierOf, tracingEnabled } from '@platform/shared/tracing/context';
import { inDatabaseSpan } from '@platform/shared/tracing/db';
import { contextOfHeaders } from '@platform/shared/tracing/nats';
import { DISPATCHER_FANOUT_CONSUMER, DOMAIN_EVENT_TYPES, type DomainEvent } from '@platform/shared/catalogue';
import { consumeDurable, consumeInBatches } from '@platform/shared/consume';
import { parseEnvelope, PoisonMessage } from '@platform/shared/envelope';
import type { Worker } from '@platform/shared/service';
import { inTwoTrips } from '@platform/shared/transactions';
import type { ConsumerWorkerOptions } from './attempts.ts';
import { claimDue, lockEndpoints, type ClaimedDelivery } from './queries/claims.ts';
import { insertDeliveries, insertMessages } from './queries/fan-out.ts';

/** Events fanned out per transaction at most. */
const FANOUT_BATCH = 500;
/** Fan-out transactions in flight at once: a new batch does not wait for a slow one to commit. */
const FANOUT_TRANSACTIONS = 2;
/** Messages the consumer pulls ahead (the consumer's max_ack_pending is 1000). */
const PULL_AHEAD = 1000;
/** Slots a batch may reserve per event: enough for an event to go to a few endpoints at once. */
const SLOTS_PER_EVENT = 4;
const PG_FOREIGN_KEY_VIOLATION = '23503';
/** A short pause before JetStream offers the message again when Postgres failed; never used to schedule deliveries. */
const DATABASE_RETRY_MS = 1000;

/** A domain event off the stream (its envelope read as every consumer reads one); throws PoisonMessage. */
function parseDomainEvent(data: Uint8Array): DomainEvent {
  const event = parseEnvelope(data, DOMAIN_EVENT_TYPES);
  // Its id becomes the webhook-id that receivers deduplicate on: only the outbox's own ids are accepted.
  if (!/^msg_[0-9a-z]{26}$/.test(event.id)) throw new PoisonMessage('id is not a message id');
  return event;
}

/**
 * Consumes the domain-event stream durably and turns the events into Postgres rows, many at a time: whatever
 * arrived while the previous transaction ran goes into the next one (messages in one statement, deliveries in
 * another), acking only after the commit: an event is never acknowledged before it is recorded. In the same
 * transaction the replica leases the new deliveries it has free slots and endpoint room for, and attempts them at
 * once, without a hint. What it had no room for stays due in Postgres (not hinted): the endpoint's finishing
 * attempts on this replica pull it next, and the sweeper hints it to any replica once the endpoint has room.
 */
/** A domain event off the stream, its messages (one unless redelivered meanwhile), and its trace context (JSON). */
interface Received {
  ms: JsMsg[];
  event: DomainEvent;
  trace: string | null;
}

export function startFanOut(opts: ConsumerWorkerOptions): Worker {
  const { sql, log, engine } = opts;

  /**
   * One transaction for `events`: messages (with their trace contexts when tracing is on), deliveries, and leases
   * on as many as `slots` allow.
   */
  const record = async (events: DomainEvent[], slots: number, traces: (string | null)[] | undefined) => {
    // Two round trips: BEGIN and the messages; then, knowing the endpoints, the deliveries, the claim and COMMIT.
    // The endpoints' oldest due deliveries are claimed first: new events do not overtake a backlog.
    let endpoints: string[] = [];
    const { created, claimed } = await inDatabaseSpan('fan out events', () =>
      inTwoTrips(
        sql,
        (tx) => insertMessages(tx, events, undefined, traces),
        (tx, rows) => {
          endpoints = [...new Set(rows.map((r) => r.endpoint_id))];
          return {
            created: insertDeliveries(tx, rows, { hinted: false }),
            locked: slots > 0 ? lockEndpoints(tx, endpoints) : Promise.resolve(),
            claimed:
              slots > 0
                ? claimDue(tx, { ...opts.claim, endpointIds: endpoints, limit: slots })
                : Promise.resolve([] as ClaimedDelivery[]),
          };
        },
      ),
    );
    return { created, claimed };
  };

  /** Fans out `events`, settling each message; on a failure, one event at a time to find the one that fails. */
  const fanOutBatch = async (batch: Received[]): Promise<void> => {
    const slots = engine.reserve(batch.length * SLOTS_PER_EVENT);
    let result: Awaited<ReturnType<typeof record>>;
    try {
      result = await record(
        batch.map((b) => b.event),
        slots,
        tracingEnabled() ? batch.map((b) => b.trace) : undefined,
      );
    } catch (err) {
      engine.start([], slots);
      if (batch.length > 1) {
        for (const one of batch) await fanOutBatch([one]);
        return;
      }
      const { ms, event } = batch[0]!;
      if ((err as { code?: string }).code === PG_FOREIGN_KEY_VIOLATION) {
        // No such merchant: retrying cannot help, and redelivering it forever would only add noise.
        log.error('domain event for an unknown merchant; terminated', { message_id: event.id });
        for (const m of ms) m.term();
        return;
      }
      log.warn('fan-out failed; JetStream will offer the event again', { message_id: event.id, err });
      for (const m of ms) m.nak(DATABASE_RETRY_MS);
      return;
    }
    for (const b of batch) for (const m of b.ms) m.ack();
    engine.start(result.claimed, slots);
    const claimed = new Set(result.claimed.map((d) => d.id));
    engine.want(result.created.filter((d) => !claimed.has(d.id)).map((d) => d.endpointId));
    if (result.created.length > 0)
      log.debug('events fanned out', {
        events: batch.length,
        deliveries: result.created.length,
        attempted_at_once: claimed.size,
      });
  };

  const fanOutMessages = async (msgs: JsMsg[]): Promise<void> => {
    // A message twice in one batch (redelivered, or published twice) is recorded once and settled with it.
    const batch = new Map<string, Received>();
    for (const m of msgs) {
      let event: DomainEvent;
      try {
        event = parseDomainEvent(m.data);
      } catch (err) {
        log.error('undecodable domain event; terminated', { subject: m.subject, seq: m.seq, err });
        m.term();
        continue;
      }
      const same = batch.get(event.id);
      if (same) same.ms.push(m);
      else batch.set(event.id, { ms: [m], event, trace: null });
    }
    // The context every attempt of an event continues: this batch's consumer span when it is the event's alone, or
    // the event's own (its producer's) in a batch of several, whose span only links to it.
    if (tracingEnabled())
      for (const b of batch.values())
        b.trace = carrierJson(msgs.length === 1 ? carrierOf() : carrierOf(contextOfHeaders(b.ms[0]!.headers)));
    // In id order: two batches inserting the same messages (a redelivery racing its original) then wait for each
    // other in one direction only, never in a cycle.
    if (batch.size > 0) await fanOutBatch([...batch.values()].sort((a, b) => (a.event.id < b.event.id ? -1 : 1)));
  };

  return consumeDurable({
    nc: opts.nc,
    prefix: opts.prefix,
    entry: DISPATCHER_FANOUT_CONSUMER,
    topology: opts.topology,
    log,
    maxMessages: PULL_AHEAD,
    session: (messages) =>
      consumeInBatches(messages, {
        concurrency: FANOUT_TRANSACTIONS,
        maxBatch: FANOUT_BATCH,
        // A lone event starts at once; what arrives meanwhile forms the next batch.
        gatherTurn: false,
        // Stop pulling while a full batch waits behind the transactions in flight.
        maxWaiting: FANOUT_BATCH,
        log,
        name: 'fan-out',
        handleBatch: fanOutMessages,
      }),
  });
}
