import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Sql } from './db.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));
// Any constant works: it only has to be the same in every process that migrates this database.
const MIGRATION_LOCK = 7_241_019;

/**
 * Applies the numbered SQL files in shared/migrations that this database has not seen, in order, each in its own
 * transaction. Each transaction first takes a transaction-scoped advisory lock, so replicas starting at once queue
 * behind one another and then find the file already applied.
 */
export async function migrate(sql: Sql): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f)).sort();
  const applied: string[] = [];
  for (const file of files) {
    const version = file.slice(0, 3);
    const text = await readFile(MIGRATIONS_DIR + file, 'utf8');
    await sql.begin(async (tx) => {
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
      if (done) return;
      try {
        await tx.unsafe(text);
      } catch (err) {
        throw new Error(`migration ${file} failed: ${(err as Error).message}`, { cause: err });
      }
      await tx`insert into schema_migrations (version) values (${version})`;
      applied.push(file);
    });
  }
  return applied;
}
