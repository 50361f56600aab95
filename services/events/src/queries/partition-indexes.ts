import type { Queryable, Sql } from '@platform/shared/db';
import { partitionsOf, type PartitionedTable } from '@platform/shared/partitions';

/** An index a partition of `spec.table` should have and has not (or has, left invalid by a failed build). */
export interface MissingIndex {
  partition: string;
  name: string;
  columns: string;
  where?: string;
  /** An index of that name exists but is invalid (a concurrent build that failed): dropped, then built again. */
  invalid: boolean;
}

/** Our partitions' and indexes' names: made from the table's name, a period and a suffix of the code's. */
const IDENTIFIER = /^[a-z][a-z0-9_]{0,62}$/;

/**
 * The indexes of `spec.partitionIndexes` missing from the partitions of `spec.table` that end after `now` (the
 * current period's and those ahead): a replica of an earlier version made them without the indexes added since.
 * Partitions wholly in the past, and the one of the rows from before partitioning, are left to the migration that
 * added the index. Reads the catalogue only.
 */
export async function missingPartitionIndexes(
  sql: Queryable,
  spec: PartitionedTable,
  now = Date.now(),
): Promise<MissingIndex[]> {
  // Not the partition of the rows from before partitioning (a lower bound of MINVALUE): the migrations index it.
  const partitions = (await partitionsOf(sql, spec.table)).filter((p) => p.to > now && p.from !== -Infinity);
  const wanted = partitions.flatMap((p) =>
    (spec.partitionIndexes ?? []).map((i) => ({ partition: p.name, name: `${p.name}_${i.suffix}`, ...i })),
  );
  if (wanted.length === 0) return [];
  const present = await sql<{ name: string; valid: boolean }[]>`
    select c.relname as name, i.indisvalid as valid
    from pg_class c join pg_index i on i.indexrelid = c.oid
    where c.relname in ${sql(wanted.map((w) => w.name))} and c.relnamespace = current_schema()::regnamespace`;
  const state = new Map(present.map((p) => [p.name, p.valid]));
  return wanted
    .filter((w) => state.get(w.name) !== true)
    .map((w) => ({
      partition: w.partition,
      name: w.name,
      columns: w.columns,
      ...(w.where ? { where: w.where } : {}),
      invalid: state.get(w.name) === false,
    }));
}

/**
 * Builds one missing index on its partition with CREATE INDEX CONCURRENTLY, which takes no lock that holds back the
 * clicks and events being written into the current month (a plain build would, for as long as it reads the month).
 * On a connection of its own, outside a transaction (as CONCURRENTLY must run), with no statement timeout: a month
 * of a large merchant's clicks takes longer than the pool's. A build that fails leaves an invalid index, dropped and
 * built again by the next run. IF NOT EXISTS: a replica that built it meanwhile is not an error.
 */
export async function buildPartitionIndex(sql: Sql, index: MissingIndex): Promise<void> {
  for (const name of [index.partition, index.name])
    if (!IDENTIFIER.test(name)) throw new Error(`not an identifier of ours: ${JSON.stringify(name)}`);
  const conn = await sql.reserve();
  try {
    await conn`set statement_timeout = 0`;
    // Its waits (for the partition's lock, and for transactions that began before it) hold no writer back.
    await conn`set lock_timeout = '1min'`;
    if (index.invalid) await conn.unsafe(`drop index concurrently if exists "${index.name}"`);
    await conn.unsafe(
      `create index concurrently if not exists "${index.name}" on "${index.partition}" (${index.columns})` +
        (index.where ? ` where ${index.where}` : ''),
    );
  } finally {
    await conn`reset statement_timeout`.catch(() => {});
    await conn`reset lock_timeout`.catch(() => {});
    conn.release();
  }
}
