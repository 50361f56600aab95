import type { Queryable, Sql } from '@platform/shared/db';
import type { Role } from './permissions.ts';

// The accounts' statements: the dashboard's sessions (dashboard_sessions) and the password, sign-up and reset
// attempts counted per subject (dashboard_signin_failures), which the dashboard, the portal and the programme pages
// share.

/** A live session with its user and merchant, as every signed-in request reads it. */
export interface SessionRow {
  user_id: string;
  email: string;
  role: Role;
  verified: boolean;
  merchant_id: string;
  name: string;
  plan: string;
  expires_at: Date;
}

/** Opens a session of `ttlMinutes` under the token's hash; answers when it expires. */
export async function insertSession(
  sql: Sql,
  session: { tokenHash: Buffer; userId: string; merchantId: string; ttlMinutes: number },
): Promise<Date> {
  const [row] = await sql<{ expires_at: Date }[]>`
    insert into dashboard_sessions (token_hash, user_id, merchant_id, expires_at)
    values (${session.tokenHash}, ${session.userId}, ${session.merchantId}, now() + make_interval(mins => ${session.ttlMinutes}))
    returning expires_at`;
  return row!.expires_at;
}

/** Removes the sessions of anyone that expired more than a day ago. */
export const deleteExpiredSessions = (sql: Sql) =>
  sql`delete from dashboard_sessions where expires_at < now() - interval '1 day'`;

/** The unexpired session of the token's hash, with its user and merchant. */
export async function liveSession(sql: Sql, tokenHash: Buffer): Promise<SessionRow | undefined> {
  const [row] = await sql<SessionRow[]>`
    select s.user_id, u.email, u.role, u.email_verified_at is not null as verified, s.merchant_id, m.name, m.plan, s.expires_at
    from dashboard_sessions s
    join dashboard_users u on u.id = s.user_id and u.merchant_id = s.merchant_id
    join merchants m on m.id = s.merchant_id
    where s.token_hash = ${tokenHash} and s.expires_at > now()`;
  return row;
}

export const deleteSession = (sql: Sql, tokenHash: Buffer) =>
  sql`delete from dashboard_sessions where token_hash = ${tokenHash}`;

/** Ends every session of the user but the one of `keepHash` (none: all of them), in `q` (a transaction's, say). */
export const deleteSessionsOf = (
  q: Queryable,
  user: { merchantId: string; userId: string },
  keepHash: Buffer | undefined,
) => q`
  delete from dashboard_sessions where merchant_id = ${user.merchantId} and user_id = ${user.userId}
    ${keepHash ? q`and token_hash <> ${keepHash}` : q``}`;

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
