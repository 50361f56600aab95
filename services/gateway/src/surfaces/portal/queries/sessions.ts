import type { Sql } from '@platform/shared/db';

/** A live portal session, as every signed-in portal request reads it. */
export interface PortalSessionRow {
  email: string;
  merchant_id: string;
  affiliate_id: string;
  only_affiliate: boolean;
  return_url: string | null;
  payout_details_until: Date | null;
}

/**
 * Opens a session of `hours` under the token's hash; with `payoutDetailsMinutes`, one that may change the payout
 * details for that long. Answers when it expires.
 */
export async function insertPortalSession(
  sql: Sql,
  s: {
    tokenHash: Buffer;
    email: string;
    merchantId: string;
    affiliateId: string;
    onlyAffiliate: boolean;
    returnUrl: string | null;
    payoutDetailsMinutes: number | null;
    hours: number;
  },
): Promise<Date> {
  const [row] = await sql<{ expires_at: Date }[]>`
    insert into portal_sessions
      (token_hash, email, merchant_id, affiliate_id, only_affiliate, return_url, payout_details_until, expires_at)
    values (${s.tokenHash}, ${s.email}, ${s.merchantId}, ${s.affiliateId}, ${s.onlyAffiliate},
            ${s.returnUrl},
            ${s.payoutDetailsMinutes !== null ? sql`now() + make_interval(mins => ${s.payoutDetailsMinutes})` : null},
            now() + make_interval(hours => ${s.hours}))
    returning expires_at`;
  return row!.expires_at;
}

/** Removes the portal sessions of anyone that expired more than a day ago. */
export const deleteExpiredPortalSessions = (sql: Sql) =>
  sql`delete from portal_sessions where expires_at < now() - interval '1 day'`;

/** The unexpired session of the token's hash, while its affiliate is approved and still has the session's address. */
export async function livePortalSession(sql: Sql, tokenHash: Buffer): Promise<PortalSessionRow | undefined> {
  const [row] = await sql<PortalSessionRow[]>`
    select s.email, s.merchant_id, s.affiliate_id, s.only_affiliate, s.return_url, s.payout_details_until
    from portal_sessions s
    join affiliates a on a.merchant_id = s.merchant_id and a.id = s.affiliate_id
    where s.token_hash = ${tokenHash} and s.expires_at > now()
      and a.status = 'approved' and lower(a.email) = s.email`;
  return row;
}

/** Points a session that is not an embedded one at another affiliate; the payout-details window closes. */
export const switchPortalSession = (sql: Sql, tokenHash: Buffer, to: { merchantId: string; affiliateId: string }) =>
  sql`
    update portal_sessions
    set merchant_id = ${to.merchantId}, affiliate_id = ${to.affiliateId}, payout_details_until = null
    where token_hash = ${tokenHash} and not only_affiliate`;

export const deletePortalSession = (sql: Sql, tokenHash: Buffer) =>
  sql`delete from portal_sessions where token_hash = ${tokenHash}`;
