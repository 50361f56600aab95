import type { Queryable, Sql } from '@platform/shared/db';
import type { Role } from '../permissions.ts';

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
