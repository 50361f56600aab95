import type { Queryable } from './db.ts';
import type { Affiliate, AffiliateStatus } from './schemas/affiliates.ts';

/**
 * The public affiliate, for every service that emits it (the affiliates service's responses and events, the
 * commissions service's affiliate.tier_promoted). The row type holds only what the output needs: the vault
 * references are not in it, so they cannot be selected into it or copied out of it.
 */
export interface AffiliateViewRow {
  id: string;
  merchant_id: string;
  slug: string;
  email: string;
  display_name: string;
  status: AffiliateStatus;
  tier_id: string | null;
  parent_id: string | null;
  lifetime_commissions_paid: string;
  custom_commission_rate: string | null;
  tracking_host: string | null;
  /** ISO 8601 in UTC with milliseconds, formatted by Postgres (see affiliateViewColumns). */
  created_at: string;
  updated_at: string;
}

/**
 * The columns of an AffiliateViewRow, from `affiliates a join merchants m`. The timestamps come formatted: parsing
 * them into Dates only to print them again is work on every list page for nothing.
 */
export const affiliateViewColumns = (sql: Queryable) => sql`
  a.id, a.merchant_id, a.slug, a.email, a.display_name, a.status, a.tier_id, a.parent_id,
  a.lifetime_commissions_paid, a.custom_commission_rate,
  ${isoTimestamp(sql, 'a.created_at')} as created_at, ${isoTimestamp(sql, 'a.updated_at')} as updated_at,
  m.settings->>'tracking_host' as tracking_host`;

/** A timestamptz column as the API prints it: 2026-01-31T12:00:00.000Z. */
const isoTimestamp = (sql: Queryable, column: 'a.created_at' | 'a.updated_at') =>
  sql`to_char(${sql.unsafe(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Built field by field, so a column added to the table is never exposed by accident. */
export function presentAffiliate(row: AffiliateViewRow, publicBaseUrl: string): Affiliate {
  const base = row.tracking_host ? `https://${row.tracking_host}` : `${publicBaseUrl}/r/${row.merchant_id}`;
  return {
    id: row.id,
    slug: row.slug,
    email: row.email,
    display_name: row.display_name,
    status: row.status,
    tier_id: row.tier_id,
    parent_id: row.parent_id,
    lifetime_commissions_paid: Number(row.lifetime_commissions_paid),
    custom_commission_rate: row.custom_commission_rate === null ? null : Number(row.custom_commission_rate),
    referral_url: row.tracking_host ? `${base}/r/${row.slug}` : `${base}/${row.slug}`,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** One affiliate of the merchant, with exactly the columns presentAffiliate reads. */
export async function findAffiliateView(
  sql: Queryable,
  merchantId: string,
  id: string,
): Promise<AffiliateViewRow | undefined> {
  const [row] = await sql<AffiliateViewRow[]>`
    select ${affiliateViewColumns(sql)}
    from affiliates a join merchants m on m.id = a.merchant_id
    where a.merchant_id = ${merchantId} and a.id = ${id}`;
  return row;
}
