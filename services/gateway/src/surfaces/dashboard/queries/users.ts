import type { Queryable, Sql } from '@platform/shared/db';

/** Dashboard users' password hashes, for sign-in and for the password asked again before a secret is shown. */
export interface SignInRow {
  id: string;
  merchant_id: string;
  /** As registered (the address typed may differ in case). */
  email: string;
  password_hash: string;
}

/**
 * The user signing in, by e-mail: sign-in is the one read not scoped to a merchant, since it is what finds the
 * merchant (the session it opens is that user's merchant's).
 */
export async function userByEmail(sql: Sql, email: string): Promise<SignInRow | undefined> {
  const [row] = await sql<SignInRow[]>`
    select id, merchant_id, email, password_hash from dashboard_users where lower(email) = lower(${email})`;
  return row;
}

/** The signed-in user's password hash. */
export async function passwordHash(sql: Sql, merchantId: string, userId: string): Promise<string | undefined> {
  const [row] = await sql<{ password_hash: string }[]>`
    select password_hash from dashboard_users where id = ${userId} and merchant_id = ${merchantId}`;
  return row?.password_hash;
}

/**
 * Replaces a hash only if it is still `was` (another sign-in may have rehashed it, another change replaced it);
 * answers whether it did.
 */
export async function replacePasswordHash(
  sql: Queryable,
  user: { merchantId: string; userId: string; was: string; hash: string },
): Promise<boolean> {
  const rows = await sql`
    update dashboard_users set password_hash = ${user.hash}
    where id = ${user.userId} and merchant_id = ${user.merchantId} and password_hash = ${user.was}`;
  return rows.count === 1;
}
