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
