import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { startPartitionMaintenance } from '@platform/shared/partitions';
import { startPeriodicPurge } from '@platform/shared/purge';
import type { Worker } from '@platform/shared/service';
import { deleteVisitsOlderThan, visitPartitions } from './queries/visits.ts';

/**
 * Visits hold personal data (an IP hash, the user agent, a fingerprint) and serve attribution only inside the
 * merchant's window, at most 365 days: past VISIT_RETENTION_DAYS (at least 366) they are deleted, at start and then
 * hourly: the months wholly past it by dropping their partitions, the rest by DELETE in batches. The partitions
 * ahead are made by the same worker.
 */
export function startVisitPurge(opts: { sql: Sql; log: Logger; retentionDays: number }): Worker {
  const partitions = startPartitionMaintenance({
    sql: opts.sql,
    log: opts.log,
    tables: [{ spec: visitPartitions, retentionDays: opts.retentionDays }],
  });
  const purge = startPeriodicPurge({
    what: 'visits',
    log: opts.log,
    batch: 5000,
    fields: { retention_days: opts.retentionDays },
    deleteBatch: (limit) => deleteVisitsOlderThan(opts.sql, opts.retentionDays, limit),
  });
  return {
    async stop() {
      await purge.stop();
      await partitions.stop();
    },
  };
}
