import type { Sql } from '@platform/shared/db';

/** The Overview's figures, per UTC day and per affiliate, for one merchant in its currency. */

const ID_TIME = '0123456789abcdefghjkmnpqrstvwxyz';

/** The smallest id made at `ms` or later: ids sort by time (shared/src/ids.ts), so a primary key range is a time range. */
function idFloor(prefix: string, ms: number): string {
  let out = '';
  for (let i = 0, t = ms; i < 10; i++, t = Math.floor(t / 32)) out = ID_TIME[t % 32] + out;
  return `${prefix}_${out}`;
}

/** Times in [from, to), or from `from` on when `to` is null (milliseconds since the epoch). */
export interface Span {
  from: number;
  to: number | null;
}

/** Processed conversions per day, read by their time-sortable event ids (the primary key). */
export function conversionsByDay(sql: Sql, merchantId: string, currency: string, span: Span) {
  const until = span.to === null ? null : new Date(span.to);
  return sql<{ day: string; conversions: number; revenue: string | null }[]>`
    select (occurred_at at time zone 'utc')::date::text as day,
           count(*) filter (where affiliate_id is not null and revenue_counted is not null)::int as conversions,
           sum(revenue_counted) filter (where not revenue_reversed and currency = ${currency})::text as revenue
    from processed_conversions
    where merchant_id = ${merchantId} and event_id >= ${idFloor('evt', span.from)} and occurred_at >= ${new Date(span.from)}
      ${until ? sql`and event_id < ${idFloor('evt', span.to!)} and occurred_at < ${until}` : sql``}
    group by 1`;
}

/** Commissions not voided per day, by (merchant_id, created_at). */
export function commissionsByDay(sql: Sql, merchantId: string, currency: string, span: Span) {
  const until = span.to === null ? null : new Date(span.to);
  return sql<{ day: string; amount: string | null }[]>`
    select (created_at at time zone 'utc')::date::text as day, sum(amount) filter (where status <> 'voided')::text as amount
    from commissions
    where merchant_id = ${merchantId} and created_at >= ${new Date(span.from)} and currency = ${currency}
      ${until ? sql`and created_at < ${until}` : sql``}
    group by 1`;
}

/** The five affiliates with the most attributed revenue, from the per-affiliate totals kept for tiers. */
export const topAffiliates = (sql: Sql, merchantId: string, currency: string) => sql<
  { id: string; display_name: string; email: string; attributed_revenue: string; conversions: number }[]
>`
  select a.id, a.display_name, a.email, s.attributed_revenue::text, s.conversions
  from (
    -- The five first, then their names: joining every affiliate before sorting took ten times as long.
    select affiliate_id, attributed_revenue, conversions from affiliate_stats
    where merchant_id = ${merchantId} and currency = ${currency}
    order by attributed_revenue desc, affiliate_id limit 5
  ) s join affiliates a on a.merchant_id = ${merchantId} and a.id = s.affiliate_id
  order by s.attributed_revenue desc, a.id`;
