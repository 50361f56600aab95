import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import type { Worker } from '@platform/shared/service';
import { deleteVisitsOlderThan } from '../queries/visits.ts';

const PURGE_EVERY_MS = 3_600_000;
const BATCH = 5000;

/**
 * Visits hold personal data (an IP hash, the user agent, a fingerprint) and serve attribution only inside the
 * merchant's window, at most 365 days: past VISIT_RETENTION_DAYS (at least 366) they are deleted, at start and then
 * hourly, in batches so that no statement holds many locks for long.
 */
export function startVisitPurge(opts: { sql: Sql; log: Logger; retentionDays: number }): Worker {
  const { sql, log } = opts;
  let running: Promise<void> | null = null;
  let stopping = false;

  const purge = async () => {
    let deleted = 0;
    for (let n = BATCH; n === BATCH && !stopping; deleted += n) n = await deleteVisitsOlderThan(sql, opts.retentionDays, BATCH);
    if (deleted > 0) log.info('visits past the retention deleted', { count: deleted, retention_days: opts.retentionDays });
  };
  const run = () => {
    if (running) return;
    running = purge()
      .catch((err) => log.warn('visit purge failed; the next run retries', { err: (err as Error).message }))
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
