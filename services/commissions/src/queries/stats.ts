import type { Queryable } from '@platform/shared/db';
import { unnestColumns } from '@platform/shared/unnest';

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

/** A clean conversion for countConversionsRevenue. */
export interface CountedConversion {
  merchantId: string;
  affiliateId: string;
  eventId: string;
  currency: string;
  amount: string;
  tierLookup: boolean;
}

const countedColumns = unnestColumns({
  merchantId: (c: CountedConversion) => c.merchantId,
  affiliateId: (c: CountedConversion) => c.affiliateId,
  eventId: (c: CountedConversion) => c.eventId,
  currency: (c: CountedConversion) => c.currency,
  amount: (c: CountedConversion) => c.amount,
  tierLookup: (c: CountedConversion) => String(c.tierLookup),
});

/**
 * Clean conversions' revenue, in one statement: marks each counted on its processed_conversions row (what a refund
 * takes back), adds it to the affiliate's attributed revenue (addAttributedRevenue) and, when `tierLookup`, finds
 * the highest tier the new total reaches (ties: the higher rate, then the newer id). Answers one result per
 * conversion, in order.
 * No two of them may be of the same affiliate (one upsert cannot update a row twice; lockKeysAndReadSettings
 * serialises an affiliate's conversions anyway). Each row is scoped by its own merchant. Their processed_conversions
 * rows must have been inserted by the calling transaction (the claim): they are updated by address.
 */
export async function countConversionsRevenue(
  sql: Queryable,
  at: Date,
  conversions: CountedConversion[],
): Promise<{ total: string; reached: { id: string; rate: string; threshold: string } | undefined }[]> {
  if (conversions.length === 0) return [];
  const c = countedColumns(conversions);
  const rows = await sql<{ n: number; attributed_revenue: string; tier_id: string | null; tier_rate: string; tier_threshold: string }[]>`
    with input as (
      select * from unnest(${c.merchantId}::text[], ${c.affiliateId}::text[], ${c.eventId}::text[], ${c.currency}::text[],
                           ${c.amount}::text[], ${c.tierLookup}::text[])
        with ordinality as s(merchant_id, affiliate_id, event_id, currency, amount, tier_lookup, n)
    ), counted as (
      -- One primary-key probe per conversion, then the row by its address. Joined on (merchant_id, event_id), the
      -- generic plan made while the table was small (input costed at 10 rows) hashed a sequential scan of every
      -- processed conversion, on every call: 57 % of the benchmark database's statement time at 1,000 events/s.
      -- A LIMIT keeps the subquery from being flattened back into that join. The rows were inserted by this
      -- transaction's claim, so no other transaction can have moved them since the probe.
      update processed_conversions p set revenue_counted = s.amount::numeric
      from input s
      cross join lateral (
        select x.ctid from processed_conversions x
        where x.merchant_id = s.merchant_id and x.event_id = s.event_id
        limit 1
      ) found
      where p.ctid = found.ctid
    ), stats as (
      insert into affiliate_stats (merchant_id, affiliate_id, currency, attributed_revenue, conversions, updated_at)
      select merchant_id, affiliate_id, currency, amount::numeric, 1, ${at} from input order by n
      on conflict (merchant_id, affiliate_id, currency) do update
        set attributed_revenue = affiliate_stats.attributed_revenue + excluded.attributed_revenue,
            conversions = affiliate_stats.conversions + excluded.conversions,
            updated_at = excluded.updated_at
      returning merchant_id, affiliate_id, currency, attributed_revenue
    )
    select s.n::int as n, st.attributed_revenue, t.id as tier_id, t.rate as tier_rate, t.threshold as tier_threshold
    from input s
    join stats st on st.merchant_id = s.merchant_id and st.affiliate_id = s.affiliate_id and st.currency = s.currency
    left join lateral (
      select id, rate, threshold from tiers
      where s.tier_lookup::boolean and merchant_id = s.merchant_id and threshold <= st.attributed_revenue
      order by threshold desc, rate desc, id desc
      limit 1
    ) t on true`;
  const results: { total: string; reached: { id: string; rate: string; threshold: string } | undefined }[] = new Array(conversions.length);
  for (const row of rows) {
    results[row.n - 1] = {
      total: row.attributed_revenue,
      reached: row.tier_id === null ? undefined : { id: row.tier_id, rate: row.tier_rate, threshold: row.tier_threshold },
    };
  }
  return results;
}
