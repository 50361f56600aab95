import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import type { PartitionedTable } from '@platform/shared/partitions';
import type { Worker } from '@platform/shared/worker';
import { buildPartitionIndex, missingPartitionIndexes } from './queries/partition-indexes.ts';

const CHECK_EVERY_MS = 3_600_000;

/**
 * Makes sure every partition of `tables` from the current month on has its table's partition indexes, and builds
 * those missing, one at a time (docs/ANALYTICS.md). A replica of an earlier version, still running during a rolling
 * update, makes the months ahead with the indexes it knows: without those of migrations 057 and 058, a month it made
 * would have the clicks list and a click's `converted` read by scanning the merchant's whole month. Migrations index
 * the partitions that exist when they run; this covers those made after, by anyone. Answers the indexes built.
 */
export async function ensurePartitionIndexes(sql: Sql, tables: PartitionedTable[], log: Logger): Promise<string[]> {
  const built: string[] = [];
  for (const spec of tables) {
    // Read again after each build: another replica may be building the same ones.
    for (;;) {
      const [next] = await missingPartitionIndexes(sql, spec);
      if (!next || built.includes(next.name)) break;
      log.info('partition index missing; building it', { table: spec.table, index: next.name, invalid: next.invalid });
      await buildPartitionIndex(sql, next);
      built.push(next.name);
    }
  }
  return built;
}

/** Runs `ensurePartitionIndexes` at start and hourly, as the partitions' own maintenance does; a failure waits for the next run. */
export function startPartitionIndexes(opts: { sql: Sql; log: Logger; tables: PartitionedTable[] }): Worker {
  let running: Promise<void> | null = null;
  const run = () => {
    running ??= ensurePartitionIndexes(opts.sql, opts.tables, opts.log)
      .then(
        (built) => {
          if (built.length > 0) opts.log.info('partition indexes built', { indexes: built });
        },
        (err) => opts.log.warn('partition index check failed; the next run retries', { err }),
      )
      .finally(() => {
        running = null;
      });
  };
  run();
  const timer = setInterval(run, CHECK_EVERY_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      if (running) await running;
    },
  };
}
