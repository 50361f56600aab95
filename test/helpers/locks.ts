import type { Sql, TransactionSql } from '@platform/shared/db';
import { eventually } from './platform.ts';

/**
 * A transaction of the test's own that holds the rows `lock` selects FOR UPDATE, as a concurrent request would;
 * answers the function that commits it and gives its connection back.
 */
export async function holdRows(sql: Sql, lock: (tx: TransactionSql) => Promise<unknown>): Promise<() => Promise<void>> {
  const holder = await sql.reserve();
  await holder`begin`;
  await lock(holder as unknown as TransactionSql);
  return async () => {
    await holder`commit`;
    holder.release();
  };
}

/**
 * Resolves once a statement of the service named `applicationName` waits on a lock (on table `relation` when named):
 * the request reached it.
 */
export const waitsOnLock = (sql: Sql, applicationName: string, relation?: string) =>
  eventually(async () => {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity a
      where datname = current_database() and application_name = ${applicationName} and wait_event_type = 'Lock'
        and (${relation ?? null}::text is null or exists (
          select 1 from pg_locks l where l.pid = a.pid and not l.granted and l.relation = ${relation ?? null}::regclass))`;
    return row!.n > 0 ? true : undefined;
  });
