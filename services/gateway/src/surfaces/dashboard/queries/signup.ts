import type { Queryable, Sql } from '@platform/shared/db';

/** A verification link lives a day. */
export const VERIFICATION_HOURS = 24;

/**
 * The user who has this e-mail, whatever its merchant: sign-up is, like sign-in, a read not scoped to a merchant,
 * since it is what finds (or makes) the merchant.
 */
export async function registeredUser(
  tx: Queryable,
  email: string,
): Promise<{ id: string; merchant_id: string; email: string; company: string; verified: boolean } | undefined> {
  const [row] = await tx<{ id: string; merchant_id: string; email: string; company: string; verified: boolean }[]>`
    select u.id, u.merchant_id, u.email, m.name as company, u.email_verified_at is not null as verified
    from dashboard_users u join merchants m on m.id = u.merchant_id
    where lower(u.email) = lower(${email})`;
  return row;
}

/**
 * Stores a verification link's token by its hash, for a day. Links of anyone that ended more than a week ago are
 * removed as new ones are made (as sessions are): the table stays the size of the recent ones.
 */
export async function insertVerification(
  tx: Queryable,
  v: { tokenHash: Buffer; userId: string; merchantId: string },
): Promise<void> {
  await tx`
    insert into email_verifications (token_hash, user_id, merchant_id, expires_at)
    values (${v.tokenHash}, ${v.userId}, ${v.merchantId}, now() + make_interval(hours => ${VERIFICATION_HOURS}))`;
  await tx`delete from email_verifications where expires_at < now() - interval '7 days'`;
}

/**
 * Uses a verification link, once: its token must be unused and within its day. Marks the link used and its user's
 * address verified in one statement, and answers the user, or undefined for a token that is unknown, used or past.
 */
export async function useVerification(
  sql: Sql,
  tokenHash: Buffer,
): Promise<{ id: string; merchant_id: string } | undefined> {
  const [row] = await sql<{ id: string; merchant_id: string }[]>`
    with used as (
      update email_verifications set used_at = now()
      where token_hash = ${tokenHash} and used_at is null and expires_at > now()
      returning user_id, merchant_id)
    update dashboard_users u set email_verified_at = coalesce(u.email_verified_at, now())
    from used where u.id = used.user_id and u.merchant_id = used.merchant_id
    returning u.id, u.merchant_id`;
  return row;
}
