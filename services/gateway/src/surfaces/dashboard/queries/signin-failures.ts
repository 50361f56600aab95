import type { Sql } from '@platform/shared/db';

/**
 * Counts one attempt against every subject, each with its limit per window of `windowSeconds`, all or none
 * (migration 026's dashboard_signin_reserve): 0 when it was counted, else the seconds until one may be made. `at` is
 * the reservation's time as text (now() in the same statement is the function's transaction's).
 */
export async function reserveAttempt(
  sql: Sql,
  subjects: string[],
  limits: number[],
  windowSeconds: number,
): Promise<{ wait: number; at: string }> {
  const [row] = await sql<{ wait: number; at: string }[]>`
    select dashboard_signin_reserve(${subjects}::text[], ${limits}::int[], ${windowSeconds}) as wait,
           now()::text as at`;
  return row!;
}

/** The same count, when the reservation's time is not needed: 0 when it was counted, else the seconds to wait. */
export async function reserveWait(sql: Sql, subjects: string[], limits: number[], windowSeconds: number) {
  const [row] = await sql<{ wait: number }[]>`
    select dashboard_signin_reserve(${subjects}::text[], ${limits}::int[], ${windowSeconds}) as wait`;
  return row!.wait;
}

/** Takes one attempt back from each subject, unless its window started again after the reservation (`at`). */
export const releaseAttempt = (sql: Sql, subjects: string[], at: string) => sql`
  update dashboard_signin_failures set count = greatest(count - 1, 0)
  where subject in ${sql(subjects)} and window_start <= ${at}::text::timestamptz`;

/** Forgets a subject's attempts. */
export const clearSubject = (sql: Sql, subject: string) =>
  sql`delete from dashboard_signin_failures where subject = ${subject}`;

/** Deletes up to `limit` rows whose window opened more than `hours` ago, skipping rows locked elsewhere. */
export async function purgeSigninFailures(sql: Sql, hours: number, limit: number): Promise<number> {
  const deleted = await sql`
    delete from dashboard_signin_failures where subject in (
      select subject from dashboard_signin_failures
      where window_start < now() - make_interval(hours => ${hours})
      limit ${limit}
      for update skip locked)`;
  return deleted.count;
}
