import type { Logger } from './log.ts';
import type { Worker } from './worker.ts';

const PURGE_EVERY_MS = 3_600_000;

/**
 * Deletes what has outlived its retention, at start and then hourly, never two runs at once. `deleteBatch(limit)`
 * deletes at most `limit` rows and says how many: batches keep each statement's locks few and short, and a run
 * goes on until a batch comes back short (or the worker is stopping).
 */
export function startPeriodicPurge(opts: {
  /** What is deleted, as the log names it ("visits"). */
  what: string;
  log: Logger;
  batch: number;
  deleteBatch: (limit: number) => Promise<number>;
  /** Added to the log line of a run that deleted something. */
  fields?: Record<string, unknown>;
}): Worker {
  return startBatchLoop({
    everyMs: PURGE_EVERY_MS,
    batch: opts.batch,
    runBatch: opts.deleteBatch,
    done: (deleted) => {
      if (deleted > 0) opts.log.info(`${opts.what} past the retention deleted`, { count: deleted, ...opts.fields });
    },
    failed: (err) => opts.log.warn(`purge of ${opts.what} failed; the next run retries`, { err }),
  });
}

/**
 * Runs batches at start and then every `everyMs`, never two runs at once: a run calls `runBatch(batch)` until one
 * comes back short (it answers how many rows it handled) or the worker is stopping, then tells `done` the total.
 * A failed run is reported to `failed` and the next one retries.
 */
export function startBatchLoop(opts: {
  everyMs: number;
  batch: number;
  runBatch: (limit: number) => Promise<number>;
  done: (total: number) => void;
  failed: (err: unknown) => void;
}): Worker {
  const { batch } = opts;
  let running: Promise<void> | null = null;
  let stopping = false;

  const loop = async () => {
    let total = 0;
    for (let n = batch; n === batch && !stopping; total += n) n = await opts.runBatch(batch);
    opts.done(total);
  };
  const run = () => {
    running ??= loop()
      .catch(opts.failed)
      .finally(() => {
        running = null;
      });
  };

  run();
  const timer = setInterval(run, opts.everyMs);
  timer.unref();
  return {
    async stop() {
      stopping = true;
      clearInterval(timer);
      if (running) await running;
    },
  };
}
