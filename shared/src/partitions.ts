import { setTimeout as sleep } from 'node:timers/promises';
import type { Queryable, Sql } from './db.ts';
import type { Logger } from './log.ts';
import type { Worker } from './worker.ts';

const MAINTAIN_EVERY_MS = 3_600_000;
// The statements that make or drop a partition, once every lock they need is held.
const PARTITION_LOCK_TIMEOUT = '2s';
// A run waits this long at most for each lock it takes (a quarter of the server's deadlock_timeout when that is
// shorter), then lets go of everything and tries again after a pause, a few times; then the next run does.
const LOCK_WAIT_MS = 200;
const LOCK_TRIES = 10;
const LOCK_PAUSE_MS = 100;
const PG_LOCK_NOT_AVAILABLE = '55P03';

/**
 * A table partitioned by range on a time column (see docs/ARCHITECTURE.md, "Partitioned tables"). Its partitions are
 * named `{table}_p{YYYYMM}` or `{table}_p{YYYYMMDD}` after the UTC period they hold; the partition that holds the
 * rows from before the table was partitioned keeps its own name and a lower bound of MINVALUE.
 */
export interface PartitionedTable {
  table: string;
  period: 'day' | 'month';
  /** The partition key's type: bounds of a date column are written as dates. */
  keyType: 'timestamptz' | 'date';
  /** Periods created ahead of the current one, so that a writer never finds its partition missing. */
  ahead: number;
  /**
   * Indexes made on each new partition (name suffix, columns and, for a partial one, its predicate), one partition
   * at a time rather than declared on the parent: a parent's index is built on every partition at once under a lock
   * on the parent that holds every writer back. A migration adding one makes it on the existing partitions likewise.
   */
  partitionIndexes?: { suffix: string; columns: string; where?: string }[];
  /** Storage parameters of each new partition (`name = value, …`): a parent has none to pass on. */
  storage?: string;
}

interface Period {
  name: string;
  from: Date;
  to: Date;
}

/** The period holding `at` and the `count - 1` after it, in UTC. */
export function periodsFrom(spec: PartitionedTable, at: Date, count: number): Period[] {
  const periods: Period[] = [];
  const start =
    spec.period === 'month'
      ? Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1)
      : Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  for (let i = 0; i < count; i++) {
    const from = new Date(start);
    const to = new Date(start);
    if (spec.period === 'month') {
      from.setUTCMonth(from.getUTCMonth() + i);
      to.setUTCMonth(to.getUTCMonth() + i + 1);
    } else {
      from.setUTCDate(from.getUTCDate() + i);
      to.setUTCDate(to.getUTCDate() + i + 1);
    }
    const stamp = from
      .toISOString()
      .slice(0, spec.period === 'month' ? 7 : 10)
      .replaceAll('-', '');
    periods.push({ name: `${spec.table}_p${stamp}`, from, to });
  }
  return periods;
}

/**
 * A partition's name as an identifier in a statement: quoted, so that a name read from the catalogue (one an operator
 * made by hand, in capitals or with any character) names that table and no other.
 */
export const quotedName = (name: string): string => `"${name.replaceAll('"', '""')}"`;

function boundLiteral(spec: PartitionedTable, at: Date): string {
  return spec.keyType === 'date' ? at.toISOString().slice(0, 10) : at.toISOString();
}

/** The partitions of `table` with their bounds in epoch milliseconds (a MINVALUE lower bound is -Infinity). */
export async function partitionsOf(
  sql: Queryable,
  table: string,
): Promise<{ name: string; from: number; to: number }[]> {
  // A timestamptz bound is printed with its offset, so it reads back as the same instant in any session; a date
  // bound has none, and is a UTC day here (as ensurePartitions writes it), whatever the session's time zone.
  const epochMs = (bound: string) =>
    sql.unsafe(`case
      when ${bound} = 'MINVALUE' then null
      when ${bound} ~ '^\\d{4}-\\d\\d-\\d\\d$' then extract(epoch from ${bound}::date::timestamp at time zone 'UTC') * 1000
      else extract(epoch from ${bound}::timestamptz) * 1000 end::float8`);
  const rows = await sql<{ name: string; from: number | null; to: number }[]>`
    select name, ${epochMs('lo')} as from, ${epochMs('hi')} as to
    from (
      select c.relname as name, btrim(b[1], '''') as lo, btrim(b[2], '''') as hi
      from pg_inherits i join pg_class c on c.oid = i.inhrelid,
        regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\((.*)\\) TO \\((.*)\\)') b
      where i.inhparent = to_regclass(${table})
    ) bounds
    order by 3`;
  return rows.map((r) => ({ name: r.name, from: r.from ?? -Infinity, to: r.to }));
}

/**
 * Does `act` on what `plan` finds to do, in a transaction that holds the table's partition lock and then, when there
 * is something to do, the table itself, in UTC. With `linked`, it also holds the tables linked to it by a foreign
 * key, which creating a partition locks (its copy of each key), after the parent. A writer holding a linked table and
 * then reading the parent could close a cycle with that, which Postgres breaks by failing either side, the writer's
 * request as likely as this; and a writer that queued for the parent behind this run while it waited would be in it
 * too. So both waits together stay shorter than the server's deadlock check takes to come: past either, the whole
 * transaction lets go (anyone queued behind it moves on) and tries again after a pause. Answers what `act` answers.
 */
async function underPartitionLock<T>(
  sql: Sql,
  table: string,
  plan: (tx: Queryable) => Promise<T[]>,
  act: (tx: Queryable, todo: T[]) => Promise<string[]>,
  opts: { linked?: boolean } = {},
): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    let waitingOnLocks = false;
    try {
      return await sql.begin(async (tx) => {
        await tx`set local timezone = 'UTC'`;
        // Replicas maintaining the same table at once queue here, however long the first takes, then each finds the
        // other's work done. Only the table locks after it are bounded: those queue ahead of the relay's writes.
        await tx`select pg_advisory_xact_lock(hashtext(${'partitions:' + table}))`;
        // Looked at again under the lock: a replica that waited for it finds the other's work done.
        const todo = await plan(tx);
        if (todo.length === 0) return [];
        // Everything asked before the first table lock, so that holding the parent is only as long as the waits.
        const linked = opts.linked ? await linkedTables(tx, table) : [];
        const [{ ms } = { ms: LOCK_WAIT_MS }] = await tx<{ ms: number }[]>`
          select least(${LOCK_WAIT_MS},
            extract(epoch from current_setting('deadlock_timeout')::interval) * 1000 / 4)::int as ms`;
        await tx.unsafe(`set local lock_timeout = '${Math.max(1, ms)}ms'`);
        waitingOnLocks = true;
        await tx.unsafe(`lock table ${table} in access exclusive mode`);
        if (linked.length > 0) await tx.unsafe(`lock table ${linked.join(', ')} in share row exclusive mode`);
        waitingOnLocks = false;
        await tx.unsafe(`set local lock_timeout = '${PARTITION_LOCK_TIMEOUT}'`);
        return act(tx, todo);
      });
    } catch (err) {
      const busy = waitingOnLocks && (err as { code?: string }).code === PG_LOCK_NOT_AVAILABLE;
      if (!busy || attempt >= LOCK_TRIES) throw err;
      await sleep(LOCK_PAUSE_MS * (0.5 + Math.random()));
    }
  }
}

/** The tables `table`'s foreign keys reference and those whose keys reference it, as quoted names. */
async function linkedTables(tx: Queryable, table: string): Promise<string[]> {
  const rows = await tx<{ name: string }[]>`
    select distinct linked::regclass::text as name from (
      select confrelid as linked from pg_constraint where contype = 'f' and conrelid = to_regclass(${table})
      union select conrelid from pg_constraint where contype = 'f' and confrelid = to_regclass(${table})
    ) keys
    where linked <> to_regclass(${table})
    order by 1`;
  return rows.map((r) => r.name);
}

/**
 * Creates the partitions for the period holding `now` and the `spec.ahead` after it, those not yet covered (the
 * partition of older rows may cover some). Safe in several replicas at once. Returns the names created.
 */
export async function ensurePartitions(sql: Sql, spec: PartitionedTable, now = new Date()): Promise<string[]> {
  const wanted = periodsFrom(spec, now, spec.ahead + 1);
  const missing = (have: { from: number; to: number }[]) =>
    wanted.filter((p) => !have.some((h) => h.from < p.to.getTime() && h.to > p.from.getTime()));
  // Looked at without the lock first: most runs find nothing to do and need not lock anything.
  if (missing(await partitionsOf(sql, spec.table)).length === 0) return [];
  return underPartitionLock(
    sql,
    spec.table,
    async (tx) => missing(await partitionsOf(tx, spec.table)),
    async (tx, todo) => {
      for (const p of todo) {
        await tx.unsafe(
          `create table if not exists ${p.name} partition of ${spec.table} ` +
            `for values from ('${boundLiteral(spec, p.from)}') to ('${boundLiteral(spec, p.to)}')` +
            (spec.storage ? ` with (${spec.storage})` : ''),
        );
        for (const index of spec.partitionIndexes ?? [])
          await tx.unsafe(
            `create index if not exists ${p.name}_${index.suffix} on ${p.name} (${index.columns})` +
              (index.where ? ` where ${index.where}` : ''),
          );
      }
      return todo.map((p) => p.name);
    },
    { linked: true },
  );
}

/**
 * Drops the partitions whose every row is older than `retentionDays` (their upper bound is that far in the past),
 * but not one that `stillNeeded` (asked under the lock, given the name as the catalogue has it: quotedName makes it
 * an identifier) says holds a row something has yet to read. Rows past the retention in the partition that
 * straddles it are the purge's (a DELETE by age, which prunes to that partition). Returns the names dropped.
 */
export async function dropExpiredPartitions(
  sql: Sql,
  spec: PartitionedTable,
  retentionDays: number,
  stillNeeded?: (tx: Queryable, partition: string) => Promise<boolean>,
): Promise<string[]> {
  const [{ cutoff } = { cutoff: 0 }] = await sql<{ cutoff: number }[]>`
    select (extract(epoch from now() - make_interval(days => ${retentionDays})) * 1000)::float8 as cutoff`;
  const expiredIn = async (q: Queryable) => (await partitionsOf(q, spec.table)).filter((p) => p.to <= cutoff);
  if ((await expiredIn(sql)).length === 0) return [];
  return underPartitionLock(sql, spec.table, expiredIn, async (tx, expired) => {
    const dropped: string[] = [];
    for (const p of expired) {
      if (stillNeeded && (await stillNeeded(tx, p.name))) continue;
      await tx.unsafe(`drop table if exists ${quotedName(p.name)}`);
      dropped.push(p.name);
    }
    return dropped;
  });
}

/**
 * Keeps a service's partitioned tables ready: at start and then hourly, the partitions ahead are created and those
 * wholly past their table's retention dropped. A run that fails (a lock not granted in time) is logged and retried
 * by the next; the partitions ahead leave that much time.
 */
export function startPartitionMaintenance(opts: {
  sql: Sql;
  log: Logger;
  tables: {
    spec: PartitionedTable;
    retentionDays?: number;
    stillNeeded?: (tx: Queryable, partition: string) => Promise<boolean>;
  }[];
}): Worker {
  const { sql, log } = opts;
  let running: Promise<void> | null = null;
  const maintain = async () => {
    for (const { spec, retentionDays, stillNeeded } of opts.tables) {
      try {
        const created = await ensurePartitions(sql, spec);
        if (created.length > 0) log.info('partitions created ahead', { table: spec.table, partitions: created });
        if (retentionDays === undefined) continue;
        const dropped = await dropExpiredPartitions(sql, spec, retentionDays, stillNeeded);
        if (dropped.length > 0)
          log.info('partitions past the retention dropped', { table: spec.table, partitions: dropped });
      } catch (err) {
        log.warn('partition maintenance failed; the next run retries', { table: spec.table, err });
      }
    }
  };
  const run = () => {
    running ??= maintain().finally(() => {
      running = null;
    });
  };
  run();
  const timer = setInterval(run, MAINTAIN_EVERY_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      if (running) await running;
    },
  };
}
