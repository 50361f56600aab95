import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { Logger } from './log.ts';
import { createPacer } from './pacer.ts';

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
  const waiting: JsMsg[] = [];
  const inFlight = new Set<Promise<void>>();
  let stopping = false;
  const start = () => {
    while (!stopping && waiting.length > 0 && inFlight.size < opts.concurrency) {
      const work: Promise<void> = opts
        .handleBatch(waiting.splice(0, opts.maxBatch))
        .catch((err) => opts.log.error(`${opts.name}: batch failed`, { err: (err as Error).message }))
        .finally(() => {
          inFlight.delete(work);
          next();
        });
      inFlight.add(work);
    }
  };
  // With gatherTurn, at the end of this turn (so that the messages delivered together are handled together) and
  // no sooner than minIntervalMs after the previous start.
  const pacer = opts.gatherTurn ? createPacer(opts.minIntervalMs ?? 0, start) : null;
  const next = () => {
    if (!pacer || waiting.length >= opts.maxBatch) start();
    else if (waiting.length > 0) pacer.kick();
  };
  const loop = (async () => {
    for await (const m of messages) {
      if (stopping) break;
      waiting.push(m);
      next();
      while (waiting.length >= opts.maxWaiting && !stopping) {
        start();
        if (inFlight.size === 0) break;
        await Promise.race(inFlight);
      }
    }
  })();
  return {
    async stop() {
      stopping = true;
      pacer?.stop();
      await messages.close().catch(() => {});
      await loop.catch(() => {});
      while (inFlight.size > 0) await Promise.all([...inFlight]);
      for (const m of waiting.splice(0)) m.nak();
    },
  };
}
