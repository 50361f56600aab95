import { createPacer } from './pacer.ts';

/**
 * How a batcher gathers items:
 * - `slots`: batches in progress at once; items that arrive while every slot is busy wait for the next batch.
 * - `largestBatch`: the most items one batch carries (Infinity: everything waiting).
 * - `leastIntervalMs`: a batch that is not full starts at the end of the event loop's turn, and no sooner than this
 *   long after the previous batch started (pacer.ts says why); `null` starts it as soon as a slot is free. A full
 *   batch starts as soon as a slot is free either way.
 */
export interface BatchShape {
  slots: number;
  largestBatch: number;
  leastIntervalMs: number | null;
}

export interface Batcher<T> {
  /** Queues an item for the next batch. */
  add(item: T): void;
  /** Items queued and not yet in a batch. */
  readonly waiting: number;
  /** Batches in progress. */
  readonly inProgress: number;
  /** Starts batches for what waits now, as far as slots allow, without waiting for the interval. */
  startNow(): void;
  /** Settles when one of the batches in progress ends (at once when none is). */
  oneEnded(): Promise<void>;
  /** Starts no more batches, waits for those in progress, and answers the items that never started. */
  stop(): Promise<T[]>;
}

/**
 * The platform's one batching primitive: the events service's recording, the stream consumers, the gateway's rate
 * limiter and the outbox relay each turn many small pieces of work into few round trips with it.
 *
 * Why batches: on these paths a statement's round trip, a commit or a JetStream exchange costs more than the rows it
 * carries, so n items in one batch cost little more than one. A lone item still starts at once (at the end of its
 * turn); under load the batches grow with the queue. `run` settles what it was given; a `run` that throws has its
 * batch handed to `failed`.
 */
export function createBatcher<T>(
  shape: BatchShape,
  run: (batch: T[]) => Promise<void>,
  failed: (err: unknown, batch: T[]) => void,
): Batcher<T> {
  const waiting: T[] = [];
  const inFlight = new Set<Promise<void>>();
  let stopped = false;

  const start = () => {
    while (!stopped && waiting.length > 0 && inFlight.size < shape.slots) {
      const batch = waiting.splice(0, shape.largestBatch);
      const work: Promise<void> = run(batch)
        .catch((err: unknown) => failed(err, batch))
        .finally(() => {
          inFlight.delete(work);
          next();
        });
      inFlight.add(work);
    }
  };
  const pacer = shape.leastIntervalMs === null ? null : createPacer(shape.leastIntervalMs, start);
  const next = () => {
    if (!pacer || waiting.length >= shape.largestBatch) start();
    else if (waiting.length > 0 && inFlight.size < shape.slots) pacer.kick();
  };

  return {
    add(item) {
      waiting.push(item);
      next();
    },
    get waiting() {
      return waiting.length;
    },
    get inProgress() {
      return inFlight.size;
    },
    startNow: start,
    oneEnded: () => (inFlight.size === 0 ? Promise.resolve() : Promise.race(inFlight)),
    async stop() {
      stopped = true;
      pacer?.stop();
      while (inFlight.size > 0) await Promise.all([...inFlight]);
      return waiting.splice(0);
    },
  };
}
