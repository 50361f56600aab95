import { jetstream, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { streamName, type DurableConsumerEntry } from './catalogue.ts';
import type { Logger } from './log.ts';
import { createBatcher } from './batcher.ts';
import type { Worker } from './worker.ts';
import type { Topology } from './topology.ts';
import { tracingEnabled } from './tracing/context.ts';
import { inConsumerBatchSpan } from './tracing/nats.ts';

/**
 * Works on a JetStream consumer's messages in batches: messages received while every batch slot is busy (or, with
 * `gatherTurn`, in one turn of the event loop, or with `minIntervalMs` too, in that interval) are handed over
 * together (at most `maxBatch` at once, at most `concurrency` batches in progress), so that a backlog costs one
 * transaction per batch rather than one per message, while a lone message starts at once. Reading stops while
 * `maxWaiting` messages wait for a slot; the rest stays with JetStream (and other replicas). `stop` stops pulling,
 * lets the batches in progress finish, and naks the messages received but not started, for prompt redelivery rather
 * than after ack_wait. `handleBatch` settles every message it is given; a batch that throws is logged and its
 * unsettled messages are redelivered after ack_wait.
 */
export function consumeInBatches(
  messages: ConsumerMessages,
  opts: {
    concurrency: number;
    maxBatch: number;
    maxWaiting: number;
    /** Wait for the end of the turn before starting a batch (true), or start one as soon as a slot is free. */
    gatherTurn: boolean;
    /**
     * With `gatherTurn`: start a batch that is not full no sooner than this long after the previous batch started
     * (pacer.ts), so that under a steady load one batch carries what arrived in the interval. 0: at the end of the
     * turn. A full batch starts as soon as a slot is free.
     */
    minIntervalMs?: number;
    log: Logger;
    name: string;
    handleBatch: (batch: JsMsg[]) => Promise<void>;
  },
): { stop(): Promise<void> } {
  let stopping = false;
  // With tracing on, a batch is worked in a consumer span continuing its message's trace (linked to each of its
  // messages' when there are several).
  const handleBatch = (batch: JsMsg[]) =>
    tracingEnabled() ? inConsumerBatchSpan(opts.name, batch, () => opts.handleBatch(batch)) : opts.handleBatch(batch);
  const batcher = createBatcher<JsMsg>(
    {
      slots: opts.concurrency,
      largestBatch: opts.maxBatch,
      leastIntervalMs: opts.gatherTurn ? (opts.minIntervalMs ?? 0) : null,
    },
    handleBatch,
    (err) => opts.log.error(`${opts.name}: batch failed`, { err }),
  );
  const loop = (async () => {
    for await (const m of messages) {
      // Received but not started: offered again at once (to this consumer's next pull, or another replica) rather
      // than after ack_wait. The pull's buffer is drained here after close.
      if (stopping) {
        m.nak();
        continue;
      }
      batcher.add(m);
      while (batcher.waiting >= opts.maxWaiting && !stopping) {
        batcher.startNow();
        if (batcher.inProgress === 0) break;
        await batcher.oneEnded();
      }
    }
  })();
  return {
    async stop() {
      stopping = true;
      // No batch starts from here on; the ones in progress finish while the pull closes.
      const unstarted = batcher.stop();
      await messages.close().catch(() => {});
      await loop.catch(() => {});
      for (const m of await unstarted) m.nak();
    },
  };
}

/** Client statuses of a pull whose consumer (or stream) is gone: it will not deliver again until made anew. */
const GONE = new Set(['consumer_deleted', 'consumer_not_found', 'stream_not_found']);

/**
 * Runs `session` on a pull from the service's durable consumer, and on a fresh pull each time the consumer turns
 * out to be gone (the client reports it deleted or not found, or the topology check had to recreate it): the old
 * session is stopped (its batches in progress finish; acks for a deleted consumer change nothing, and processing is
 * idempotent) and a new one starts once the consumer exists again. Without this, a pull on a recreated consumer
 * waits for the client's own recovery, up to a minute of missed heartbeats and backoff.
 */
export function consumeDurable(opts: {
  nc: NatsConnection;
  prefix: string;
  entry: DurableConsumerEntry;
  topology: Topology;
  log: Logger;
  maxMessages: number;
  session: (messages: ConsumerMessages) => { stop(): Promise<void> };
}): Worker {
  const { entry, topology, log } = opts;
  const stream = streamName(opts.prefix, entry.stream);
  const js = jetstream(opts.nc);
  let current: { messages: ConsumerMessages; run: { stop(): Promise<void> } } | null = null;
  let restarting: Promise<void> | null = null;
  let again = false;
  let stopped = false;

  const open = async () => {
    const consumer = await js.consumers.get(stream, entry.durable_name);
    const messages = await consumer.consume({ max_messages: opts.maxMessages });
    void (async () => {
      for await (const s of messages.status()) {
        if (!GONE.has(s.type)) continue;
        log.warn('consumer gone; checking the topology and pulling anew', {
          consumer: entry.durable_name,
          status: s.type,
        });
        void topology.check();
        restart();
        return;
      }
    })().catch(() => {});
    current = { messages, run: opts.session(messages) };
    log.info('pulling from consumer', { consumer: entry.durable_name });
  };

  const reopen = async () => {
    do {
      again = false;
      const old = current;
      current = null;
      await old?.run.stop();
      for (let attempt = 0; !stopped; attempt++) {
        try {
          // A restart asked for before this open is answered by it (the topology check that recreated the consumer
          // while we waited, say): opening twice would strand what the first pull had received until ack_wait.
          again = false;
          await open();
          break;
        } catch (err) {
          if (attempt === 0) log.warn('consumer not available; retrying', { consumer: entry.durable_name, err });
          await topology.check();
          await new Promise((r) => setTimeout(r, RETRY_OPEN_MS));
        }
      }
    } while (again && !stopped);
  };

  function restart(): void {
    if (stopped) return;
    if (restarting) {
      again = true;
      return;
    }
    restarting = reopen().finally(() => {
      restarting = null;
    });
  }

  topology.onConsumerCreated(entry.durable_name, restart);
  restart();
  return {
    async stop() {
      stopped = true;
      await restarting;
      await current?.run.stop();
    },
  };
}

/** Pause between two tries to pull from a consumer that is not there (the topology check recreates it meanwhile). */
const RETRY_OPEN_MS = 500;
