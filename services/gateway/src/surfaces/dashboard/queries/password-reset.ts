import type { Queryable } from '@platform/shared/db';

/** A reset link lives half an hour: long enough to open a mail, short for a link left in a mailbox. */
export const RESET_MINUTES = 30;

/**
 * Stores a reset link's token by its hash. Links of anyone that ended more than a day ago are removed as new ones are
 * made: the table stays the size of the recent ones.
 */
export async function insertReset(
  tx: Queryable,
  r: { tokenHash: Buffer; userId: string; merchantId: string },
): Promise<void> {
  await tx`
    insert into password_resets (token_hash, user_id, merchant_id, expires_at)
    values (${r.tokenHash}, ${r.userId}, ${r.merchantId}, now() + make_interval(mins => ${RESET_MINUTES}))`;
  await tx`delete from password_resets where expires_at < now() - interval '1 day'`;
}

/**
 * Uses a reset link, once: unused and within its half hour. Marks it and every other live link of its user used (a
 * reset ends them all) and answers the user, or undefined for a token unknown, used or past.
 */
export async function useReset(
  tx: Queryable,
  tokenHash: Buffer,
): Promise<{ id: string; merchant_id: string; email: string } | undefined> {
  const [used] = await tx<{ user_id: string; merchant_id: string }[]>`
    update password_resets set used_at = now()
    where token_hash = ${tokenHash} and used_at is null and expires_at > now()
    returning user_id, merchant_id`;
  if (!used) return undefined;
  await tx`
    update password_resets set used_at = now()
    where user_id = ${used.user_id} and merchant_id = ${used.merchant_id} and used_at is null`;
  const [user] = await tx<{ id: string; merchant_id: string; email: string }[]>`
    select id, merchant_id, email from dashboard_users where id = ${used.user_id} and merchant_id = ${used.merchant_id}`;
  return user;
}

/**
 * Sets a new password hash after a reset. Following the mailed link proves the address, so it counts as verified too
 * (an owner who signed up and lost the first mail).
 */
export async function setPasswordAfterReset(
  tx: Queryable,
  user: { merchantId: string; userId: string; hash: string },
): Promise<void> {
  await tx`
    update dashboard_users
    set password_hash = ${user.hash}, email_verified_at = coalesce(email_verified_at, now())
    where id = ${user.userId} and merchant_id = ${user.merchantId}`;
}
