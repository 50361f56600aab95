import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { Logger } from './log.ts';

/**
 * Works on a JetStream consumer's messages in batches: messages received while every batch slot is busy (or, with
 * `gatherTurn`, in one turn of the event loop) are handed over together (at most `maxBatch` at once, at most `concurrency` batches in
 * progress), so that a backlog costs one transaction per batch rather than one per message, while a lone message
 * starts at once. Reading stops while `maxWaiting` messages wait for a slot; the rest stays with JetStream (and
 * other replicas). `stop` stops pulling, lets the batches in progress finish, and naks the messages received but
 * not started, for prompt redelivery rather than after ack_wait. `handleBatch` settles every message it is given;
 * a batch that throws is logged and its unsettled messages are redelivered after ack_wait.
 */
export function consumeInBatches(
  messages: ConsumerMessages,
  opts: {
    concurrency: number;
    maxBatch: number;
    maxWaiting: number;
    /** Wait for the end of the turn before starting a batch (true), or start one as soon as a slot is free. */
    gatherTurn: boolean;
    log: Logger;
    name: string;
    handleBatch: (batch: JsMsg[]) => Promise<void>;
  },
): { stop(): Promise<void> } {
  const waiting: JsMsg[] = [];
  const inFlight = new Set<Promise<void>>();
  let stopping = false;
  let scheduled = false;
  const start = () => {
    scheduled = false;
    while (!stopping && waiting.length > 0 && inFlight.size < opts.concurrency) {
      const work: Promise<void> = opts
        .handleBatch(waiting.splice(0, opts.maxBatch))
        .catch((err) => opts.log.error(`${opts.name}: batch failed`, { err: (err as Error).message }))
        .finally(() => {
          inFlight.delete(work);
          start();
        });
      inFlight.add(work);
    }
  };
  const loop = (async () => {
    for await (const m of messages) {
      if (stopping) break;
      waiting.push(m);
      if (!opts.gatherTurn) start();
      else if (!scheduled) {
        // Start at the end of this turn, so that the messages delivered together are handled together.
        scheduled = true;
        setImmediate(start);
      }
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
      await messages.close().catch(() => {});
      await loop.catch(() => {});
      while (inFlight.size > 0) await Promise.all([...inFlight]);
      for (const m of waiting.splice(0)) m.nak();
    },
  };
}
