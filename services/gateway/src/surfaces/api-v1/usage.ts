import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { startPartitionMaintenance, type PartitionedTable } from '@platform/shared/partitions';
import { addDailyUsage, touchKeys } from './queries/key-usage.ts';

/**
 * The usage log is partitioned by month and kept: a partition holds a month of every key's days, so that a month no
 * longer wanted can be dropped whole, never deleted row by row. Two months are made ahead.
 */
export const keyUsagePartitions: PartitionedTable = {
  table: 'api_key_usage_daily',
  period: 'month',
  keyType: 'date',
  ahead: 2,
};

/**
 * Counts requests per key in memory and adds them to the per-day usage log (and last_used_at) every few seconds,
 * so the audit trail costs one write per key per interval instead of one per request.
 */
export function createUsageRecorder(sql: Sql, log: Logger, intervalMs = 5000) {
  let counts = new Map<string, number>();
  const partitions = startPartitionMaintenance({ sql, log, tables: [{ spec: keyUsagePartitions }] });

  const flush = async () => {
    if (counts.size === 0) return;
    const batch = counts;
    counts = new Map();
    const rows = [...batch].map(([key_id, requests]) => ({ key_id, requests }));
    try {
      await addDailyUsage(sql, rows);
      await touchKeys(sql, rows);
    } catch (err) {
      // Put the counts back: they are added on the next flush.
      for (const [k, n] of batch) counts.set(k, (counts.get(k) ?? 0) + n);
      log.warn('could not record key usage', { err });
    }
  };

  const timer = setInterval(() => void flush(), intervalMs);
  timer.unref();
  return {
    record: (keyId: string) => {
      counts.set(keyId, (counts.get(keyId) ?? 0) + 1);
    },
    flush,
    async stop() {
      clearInterval(timer);
      await flush();
      await partitions.stop();
    },
  };
}
