import type { Queryable } from '@platform/shared/db';
import type { AffiliateStatus } from '@platform/shared/schemas/affiliates';

/** What the engine needs of the event's affiliate. The fingerprint vault list is only tested in SQL, never read. */
export interface EarningAffiliateRow {
  id: string;
  status: AffiliateStatus;
  tier_id: string | null;
  tier_rate: string | null;
  tier_threshold: string | null;
  custom_commission_rate: string | null;
  email_matches: boolean;
  fingerprint_matches: boolean;
}

/** Locks the affiliate row (tier promotion writes it) and evaluates the two identity fraud checks in SQL. */
export async function lockEarningAffiliate(
  sql: Queryable,
  merchantId: string,
  affiliateId: string,
  customer: { email: string | null; fingerprint: string | null },
): Promise<EarningAffiliateRow | undefined> {
  const [row] = await sql<EarningAffiliateRow[]>`
    select a.id, a.status, a.tier_id, t.rate as tier_rate, t.threshold as tier_threshold, a.custom_commission_rate,
           coalesce(lower(a.email) = lower(${customer.email}::text), false) as email_matches,
           coalesce(${customer.fingerprint}::text = any(a.fingerprint_visitor_ids), false) as fingerprint_matches
    from affiliates a
    left join tiers t on t.merchant_id = a.merchant_id and t.id = a.tier_id
    where a.merchant_id = ${merchantId} and a.id = ${affiliateId}
    for update of a`;
  return row;
}

export interface AncestorRow {
  id: string;
  status: AffiliateStatus;
  level: number;
}

/** The affiliate's ancestors, parent first (level 1), at most `maxLevels` of them. */
export async function findAncestors(sql: Queryable, merchantId: string, affiliateId: string, maxLevels: number): Promise<AncestorRow[]> {
  if (maxLevels <= 0) return [];
  return sql<AncestorRow[]>`
    with recursive lineage (id, parent_id, status, level) as (
      select a.id, a.parent_id, a.status, 0 from affiliates a
      where a.merchant_id = ${merchantId} and a.id = ${affiliateId}
      union all
      select p.id, p.parent_id, p.status, l.level + 1 from lineage l
      join affiliates p on p.merchant_id = ${merchantId} and p.id = l.parent_id
      where l.level < ${maxLevels}
    )
    select id, status, level from lineage where level > 0 order by level`;
}

export interface TierRow {
  id: string;
  rate: string;
  threshold: string;
}

/** The highest tier whose threshold the revenue has reached (ties: the higher rate, then the newer id). */
export async function highestTierReached(sql: Queryable, merchantId: string, revenue: string): Promise<TierRow | undefined> {
  const [row] = await sql<TierRow[]>`
    select id, rate, threshold from tiers
    where merchant_id = ${merchantId} and threshold <= ${revenue}::numeric
    order by threshold desc, rate desc, id desc
    limit 1`;
  return row;
}

export async function setAffiliateTier(sql: Queryable, merchantId: string, affiliateId: string, tierId: string, at: Date): Promise<void> {
  await sql`
    update affiliates set tier_id = ${tierId}, updated_at = ${at}
    where merchant_id = ${merchantId} and id = ${affiliateId}`;
}
