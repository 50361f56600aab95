import type { Sql } from '@platform/shared/db';

/**
 * Counts one attempt against every subject, each with its limit per window of `windowSeconds`, all or none
 * (migration 069's dashboard_signin_reserve_at): 0 when it was counted, else the seconds until one may be made. `at`
 * is the reservation's time as text, taken once the subjects' rows were locked (never before a window it counted in).
 */
export async function reserveAttempt(
  sql: Sql,
  subjects: string[],
  limits: number[],
  windowSeconds: number,
): Promise<{ wait: number; at: string }> {
  const [row] = await sql<{ wait: number; at: string }[]>`
    select wait, at::text as at
    from dashboard_signin_reserve_at(${subjects}::text[], ${limits}::int[], ${windowSeconds})`;
  return row!;
}

/** The same count, when the reservation's time is not needed: 0 when it was counted, else the seconds to wait. */
export async function reserveWait(sql: Sql, subjects: string[], limits: number[], windowSeconds: number) {
  return (await reserveAttempt(sql, subjects, limits, windowSeconds)).wait;
}

/**
 * Takes one attempt back from each subject, unless its window started again after the reservation (`at`). The rows
 * are locked in the order a reservation locks them (by subject), so a release and a reservation that share subjects
 * wait for each other instead of deadlocking.
 */
export const releaseAttempt = (sql: Sql, subjects: string[], at: string) => sql`
  update dashboard_signin_failures f set count = greatest(f.count - 1, 0)
  from (
    select subject from dashboard_signin_failures
    where subject in ${sql(subjects)} and window_start <= ${at}::text::timestamptz
    order by subject for update
  ) locked
  where f.subject = locked.subject`;

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
