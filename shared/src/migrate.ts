import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Sql } from './db.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));
// Any constant works: it only has to be the same in every process that migrates this database.
const MIGRATION_LOCK = 7_241_019;
/**
 * How long one statement of a migration waits for a table lock before the migration gives up and starts again.
 * The first tries wait less than PostgreSQL's default deadlock_timeout (1 s): when a migration and a running
 * replica's statement wait on each other, the migration's wait ends first and the replica's statement goes on,
 * instead of the deadlock detector failing the replica's write; it also bounds how long a migration queued for an
 * exclusive lock holds back the reads and writes queued behind it. Later tries wait longer, because an autovacuum
 * that holds the lock is cancelled only for a waiter that has waited past deadlock_timeout.
 */
function lockWaitMs(attempt: number): number {
  return attempt < 5 ? 250 : 5_000;
}
/** How long a migration goes on starting again while it cannot get its locks, before the start fails. */
const LOCK_RETRY_BUDGET_MS = 10 * 60_000;
const LOCK_NOT_AVAILABLE = '55P03';
const DEADLOCK_DETECTED = '40P01';

/**
 * Applies the numbered SQL files in shared/migrations that this database has not seen, in order, each in its own
 * transaction. Each transaction first takes a transaction-scoped advisory lock, so replicas starting at once queue
 * behind one another and then find the file already applied. A migration whose lock waits run out (or that a
 * deadlock ends) is rolled back whole and started again after a jittered pause.
 * The versions already recorded are read first, without the lock: a version recorded is committed for good, so only
 * the others are opened, locked and checked again. A replica starting on an up-to-date database then reads one row
 * per migration in one statement, where it would otherwise queue for the lock and check each file in a transaction.
 */
export async function migrate(sql: Sql): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f)).sort();
  const recorded = await recordedVersions(sql);
  const applied: string[] = [];
  for (const file of files.filter((f) => !recorded.has(f.slice(0, 3)))) {
    const text = await readFile(MIGRATIONS_DIR + file, 'utf8');
    if (await applyWithRetries(sql, file, text)) applied.push(file);
  }
  return applied;
}

/** The versions schema_migrations records (none before the first migration has created it). */
async function recordedVersions(sql: Sql): Promise<Set<string>> {
  const [table] = await sql<{ exists: boolean }[]>`select to_regclass('schema_migrations') is not null as exists`;
  if (!table!.exists) return new Set();
  const rows = await sql<{ version: string }[]>`select version from schema_migrations`;
  return new Set(rows.map((r) => r.version));
}

async function applyWithRetries(sql: Sql, file: string, text: string): Promise<boolean> {
  const giveUpAt = Date.now() + LOCK_RETRY_BUDGET_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await apply(sql, file, text, lockWaitMs(attempt));
    } catch (err) {
      if (!isLockWait(err) || Date.now() > giveUpAt) throw err;
      const ceiling = Math.min(2_000, 50 * 2 ** attempt);
      await new Promise((resolve) => setTimeout(resolve, ceiling / 2 + Math.random() * (ceiling / 2)));
    }
  }
}

async function apply(sql: Sql, file: string, text: string, lockWait: number): Promise<boolean> {
  const version = file.slice(0, 3);
  return sql.begin(async (tx) => {
    // A migration may rewrite a large table, and waits for the replica migrating before it: neither is bounded by
    // the pool's statement_timeout and lock_timeout, which are for the API's work.
    await tx`set local statement_timeout = 0`;
    await tx`set local lock_timeout = 0`;
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`create table if not exists schema_migrations (
      version text primary key,
      applied_at timestamptz not null default now()
    )`;
    const [done] = await tx`select 1 from schema_migrations where version = ${version}`;
    if (done) return false;
    await tx.unsafe(`set local lock_timeout = ${Math.trunc(lockWait)}`);
    try {
      await tx.unsafe(text);
    } catch (err) {
      if (isLockWait(err)) throw err;
      throw new Error(`migration ${file} failed: ${(err as Error).message}`, { cause: err });
    }
    await tx`insert into schema_migrations (version) values (${version})`;
    return true;
  });
}

function isLockWait(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === LOCK_NOT_AVAILABLE || code === DEADLOCK_DETECTED;
}
