import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { Logger } from './log.ts';

/**
 * Works on a JetStream consumer's messages with at most `concurrency` handlers at once. `stop` stops pulling, lets
 * the handlers in progress finish, and resolves; a message handed over but not started is redelivered by JetStream
 * after ack_wait. A handler learns through `stopping()` that the worker is stopping (to nak rather than start work).
 * A handler that throws is logged; its message, neither acked nor naked, is redelivered after ack_wait.
 */
export function consumeConcurrently(
  messages: ConsumerMessages,
  opts: { concurrency: number; log: Logger; name: string; handle: (m: JsMsg, stopping: () => boolean) => Promise<void> },
): { stop(): Promise<void> } {
  const inFlight = new Set<Promise<void>>();
  let stopping = false;
  const isStopping = () => stopping;
  const loop = (async () => {
    for await (const m of messages) {
      const work: Promise<void> = opts
        .handle(m, isStopping)
        .catch((err) => opts.log.error(`${opts.name}: handler failed`, { stream_seq: m.seq, err: (err as Error).message }))
        .finally(() => inFlight.delete(work));
      inFlight.add(work);
      if (inFlight.size >= opts.concurrency) await Promise.race(inFlight);
    }
  })();
  return {
    async stop() {
      stopping = true;
      await messages.close().catch(() => {});
      await loop.catch(() => {});
      await Promise.all(inFlight);
    },
  };
}
