import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { startPeriodicPurge } from '@platform/shared/purge';
import type { Worker } from '@platform/shared/service';
import { deleteExpiredKeys } from './queries.ts';

/**
 * Idempotency keys past their 24 hours are deleted at start and then hourly, in batches. A key past its lifetime
 * and not purged yet is already free (claimKey takes it over), so the purge only keeps the table small.
 */
export function startIdempotencyPurge(sql: Sql, log: Logger): Worker {
  return startPeriodicPurge({
    what: 'idempotency keys',
    log,
    batch: 5000,
    deleteBatch: (limit) => deleteExpiredKeys(sql, limit),
  });
}
