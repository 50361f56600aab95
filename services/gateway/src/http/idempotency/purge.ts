import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { startPartitionMaintenance } from '@platform/shared/partitions';
import { startPeriodicPurge } from '@platform/shared/purge';
import type { Worker } from '@platform/shared/service';
import { deleteExpiredKeys, idempotencyPartitions, KEY_LIFETIME_DAYS } from './queries.ts';

/**
 * Keeps idempotency_keys' days ready and short: at start and then hourly, the days ahead are made and those whose
 * every key is past its 24 hours dropped (shared/src/partitions.ts), and the expired keys of the days that straddle
 * the lifetime deleted in batches. A key past its lifetime and not deleted yet is already free (claimKey takes it
 * over), so neither is needed for correctness, only to keep the table small.
 */
export function startIdempotencyPurge(sql: Sql, log: Logger): Worker {
  const partitions = startPartitionMaintenance({
    sql,
    log,
    tables: [{ spec: idempotencyPartitions, retentionDays: KEY_LIFETIME_DAYS }],
  });
  const purge = startPeriodicPurge({
    what: 'idempotency keys',
    log,
    batch: 5000,
    deleteBatch: (limit) => deleteExpiredKeys(sql, limit),
  });
  return {
    async stop() {
      await purge.stop();
      await partitions.stop();
    },
  };
}
