import type { Queryable } from '@platform/shared/db';

/** Adds (or with a negative delta, takes back) attributed revenue; returns the affiliate's new total in that currency. */
export async function addAttributedRevenue(
  sql: Queryable,
  s: { merchantId: string; affiliateId: string; currency: string; amount: string; conversions: number; at: Date },
): Promise<string> {
  const [row] = await sql<{ attributed_revenue: string }[]>`
    insert into affiliate_stats (merchant_id, affiliate_id, currency, attributed_revenue, conversions, updated_at)
    values (${s.merchantId}, ${s.affiliateId}, ${s.currency}, ${s.amount}::numeric, ${s.conversions}, ${s.at})
    on conflict (merchant_id, affiliate_id, currency) do update
      set attributed_revenue = affiliate_stats.attributed_revenue + excluded.attributed_revenue,
          conversions = affiliate_stats.conversions + excluded.conversions,
          updated_at = excluded.updated_at
    returning attributed_revenue`;
  return row!.attributed_revenue;
}

/**
 * A clean conversion's revenue, in one statement: marks it counted on its processed_conversions row (what a refund
 * takes back), adds it to the affiliate's attributed revenue (addAttributedRevenue) and, when `tierLookup`, finds
 * the highest tier the new total reaches (ties: the higher rate, then the newer id).
 */
export async function countConversionRevenue(
  sql: Queryable,
  s: { merchantId: string; affiliateId: string; eventId: string; currency: string; amount: string; at: Date; tierLookup: boolean },
): Promise<{ total: string; reached: { id: string; rate: string; threshold: string } | undefined }> {
  const [row] = await sql<{ attributed_revenue: string; tier_id: string | null; tier_rate: string; tier_threshold: string }[]>`
    with counted as (
      update processed_conversions set revenue_counted = ${s.amount}::numeric
      where merchant_id = ${s.merchantId} and event_id = ${s.eventId}
    ), stats as (
      insert into affiliate_stats (merchant_id, affiliate_id, currency, attributed_revenue, conversions, updated_at)
      values (${s.merchantId}, ${s.affiliateId}, ${s.currency}, ${s.amount}::numeric, 1, ${s.at})
      on conflict (merchant_id, affiliate_id, currency) do update
        set attributed_revenue = affiliate_stats.attributed_revenue + excluded.attributed_revenue,
            conversions = affiliate_stats.conversions + excluded.conversions,
            updated_at = excluded.updated_at
      returning attributed_revenue
    )
    ${
      s.tierLookup
        ? sql`
          select s.attributed_revenue, t.id as tier_id, t.rate as tier_rate, t.threshold as tier_threshold
          from stats s
          left join lateral (
            select id, rate, threshold from tiers
            where merchant_id = ${s.merchantId} and threshold <= s.attributed_revenue
            order by threshold desc, rate desc, id desc
            limit 1
          ) t on true`
        : sql`select s.attributed_revenue, null::text as tier_id, null::text as tier_rate, null::text as tier_threshold from stats s`
    }`;
  return {
    total: row!.attributed_revenue,
    reached: row!.tier_id === null ? undefined : { id: row!.tier_id, rate: row!.tier_rate, threshold: row!.tier_threshold },
  };
}
