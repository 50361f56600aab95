import type { Sql } from '@platform/shared/db';

/**
 * Checks, without counting, the subjects' windows (dashboard_signin_failures, migration 026) against their limits:
 * null when none is full, else the seconds until the fullest window opens again.
 */
export async function fullWindowWait(
  sql: Sql,
  subjects: string[],
  limits: number[],
  windowSeconds: number,
): Promise<number | null> {
  const [row] = await sql<{ wait: number | null }[]>`
    select max(greatest(ceil(extract(epoch from f.window_start + make_interval(secs => ${windowSeconds}) - now())), 1))::int as wait
    from dashboard_signin_failures f
    join unnest(${subjects}::text[], ${limits}::int[]) as l (subject, lim)
      on l.subject = f.subject
    where f.window_start > now() - make_interval(secs => ${windowSeconds}) and f.count >= l.lim`;
  return row?.wait ?? null;
}
