import { readdir, readFile } from 'node:fs/promises';
import postgres from 'postgres';
import type { Sql } from '@platform/shared/db';
import { migrate } from '@platform/shared/migrate';
import { ROOT, sleep } from './platform.ts';

const DIR = `${ROOT}shared/migrations/`;

/**
 * Applies the migrations numbered below `first` to an unmigrated database, as the version before them had it, and
 * answers the names of those from `first` on (what a later migrate() applies).
 */
export async function migrateBefore(sql: Sql, first: string): Promise<string[]> {
  const files = (await readdir(DIR)).filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f)).sort();
  await sql`create table schema_migrations (version text primary key, applied_at timestamptz not null default now())`;
  for (const file of files.filter((f) => f.slice(0, 3) < first)) {
    const text = await readFile(DIR + file, 'utf8');
    await sql.begin(async (tx) => {
      await tx.unsafe(text);
      await tx`insert into schema_migrations (version) values (${file.slice(0, 3)})`;
    });
  }
  return files.filter((f) => f.slice(0, 3) >= first);
}

/** Three replicas starting at once, each migrating on a connection of its own: the migrations each applied. */
export async function migrateFromReplicas(t: { teardown(fn: () => unknown): void }, url: string): Promise<string[][]> {
  const replicas = [0, 1, 2].map(() => postgres(url, { max: 1, onnotice: () => {} }));
  t.teardown(() => Promise.all(replicas.map((r) => r.end({ timeout: 1 }))));
  return Promise.all(replicas.map((r) => migrate(r)));
}

/**
 * Three replicas migrate at once while a service of the previous version writes: `write` (its n-th round, on a
 * connection of its own that keeps its prepared statements) answers whether it wrote. Answers what each replica
 * applied, what was written, and the errors of the writes that failed.
 */
export async function migrateWhileWriting(
  t: { teardown(fn: () => unknown): void },
  url: string,
  write: (sql: postgres.Sql, n: number) => Promise<string | null>,
): Promise<{ applied: string[][]; written: string[]; failures: { code?: string }[] }> {
  const writer = postgres(url, { max: 1, onnotice: () => {} });
  t.teardown(() => writer.end({ timeout: 1 }));
  let writing = true;
  const failures: { code?: string }[] = [];
  const written: string[] = [];
  const writes = (async () => {
    for (let n = 0; writing; n++) {
      try {
        const wrote = await write(writer, n);
        if (wrote !== null) written.push(wrote);
      } catch (err) {
        failures.push(err as { code?: string });
      }
      await sleep(5);
    }
  })();
  await sleep(200);
  const applied = await migrateFromReplicas(t, url);
  await sleep(200);
  writing = false;
  await writes;
  return { applied, written, failures };
}
