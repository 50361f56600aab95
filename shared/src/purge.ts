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
  const { log, batch } = opts;
  let running: Promise<void> | null = null;
  let stopping = false;

  const purge = async () => {
    let deleted = 0;
    for (let n = batch; n === batch && !stopping; deleted += n) n = await opts.deleteBatch(batch);
    if (deleted > 0) log.info(`${opts.what} past the retention deleted`, { count: deleted, ...opts.fields });
  };
  const run = () => {
    running ??= purge()
      .catch((err) => log.warn(`purge of ${opts.what} failed; the next run retries`, { err }))
      .finally(() => {
        running = null;
      });
  };

  run();
  const timer = setInterval(run, PURGE_EVERY_MS);
  timer.unref();
  return {
    async stop() {
      stopping = true;
      clearInterval(timer);
      if (running) await running;
    },
  };
}
