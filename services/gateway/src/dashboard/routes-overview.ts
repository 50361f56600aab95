import type { Sql } from '@platform/shared/db';
import { withDefaults } from '@platform/shared/schemas/merchant-settings';
import { route, type DashboardContext } from './define.ts';
import { Overview } from './schemas.ts';

const DAYS = 30;
const ID_TIME = '0123456789abcdefghjkmnpqrstvwxyz';

/** The smallest id made at `ms` or later: ids sort by time (shared/src/ids.ts), so a primary key range is a time range. */
function idFloor(prefix: string, ms: number): string {
  let out = '';
  for (let i = 0, t = ms; i < 10; i++, t = Math.floor(t / 32)) out = ID_TIME[t % 32] + out;
  return `${prefix}_${out}`;
}

interface DayTotals {
  conversions: number;
  revenue: number;
  commissions: number;
}

/**
 * Closed days' totals per merchant, reused for CLOSED_DAYS_TTL_MS: summing a month of a large merchant's
 * commissions takes about a second (500,000 rows in the benchmark), while a day that has ended changes only when
 * one of its commissions is voided later. Today is always read afresh. Bounded: cleared when full.
 */
const CLOSED_DAYS_TTL_MS = 5 * 60_000;
const CACHE_MAX = 2_000;
const closedDays = new Map<string, { key: string; expires: number; days: Map<string, DayTotals> }>();

async function dailyTotals(
  sql: Sql,
  merchantId: string,
  currency: string,
  from: number,
  to: number | null,
): Promise<Map<string, DayTotals>> {
  const until = to === null ? null : new Date(to);
  const [conversions, commissions] = await Promise.all([
    sql<{ day: string; conversions: number; revenue: string | null }[]>`
      select (occurred_at at time zone 'utc')::date::text as day,
             count(*) filter (where affiliate_id is not null and revenue_counted is not null)::int as conversions,
             sum(revenue_counted) filter (where not revenue_reversed and currency = ${currency})::text as revenue
      from processed_conversions
      where merchant_id = ${merchantId} and event_id >= ${idFloor('evt', from)} and occurred_at >= ${new Date(from)}
        ${until ? sql`and event_id < ${idFloor('evt', to!)} and occurred_at < ${until}` : sql``}
      group by 1`,
    sql<{ day: string; amount: string | null }[]>`
      select (created_at at time zone 'utc')::date::text as day, sum(amount) filter (where status <> 'voided')::text as amount
      from commissions
      where merchant_id = ${merchantId} and created_at >= ${new Date(from)} and currency = ${currency}
        ${until ? sql`and created_at < ${until}` : sql``}
      group by 1`,
  ]);
  const days = new Map<string, DayTotals>();
  const day = (d: string) => days.get(d) ?? days.set(d, { conversions: 0, revenue: 0, commissions: 0 }).get(d)!;
  for (const r of conversions)
    Object.assign(day(r.day), { conversions: r.conversions, revenue: Number(r.revenue ?? 0) });
  for (const r of commissions) day(r.day).commissions = Number(r.amount ?? 0);
  return days;
}

/**
 * The Overview's figures for the last 30 UTC days: processed conversions read by their time-sortable event ids
 * (primary key), commissions by (merchant_id, created_at), closed days from the cache above; top affiliates from the
 * per-affiliate totals the commissions service keeps for tiers.
 */
export const overviewRoutes = [
  route({
    operationId: 'getOverview',
    method: 'get',
    path: '/dashboard/api/overview',
    summary: 'Conversions, attributed revenue and commissions per day over the last 30 days, and the top affiliates',
    success: { status: 200, schema: Overview, description: 'the figures' },
    async handler(ctx: DashboardContext) {
      const merchantId = ctx.session.merchantId;
      const [merchant] = await ctx.sql<
        { settings: unknown }[]
      >`select settings from merchants where id = ${merchantId}`;
      const currency = withDefaults(merchant?.settings).currency;
      const today = new Date(new Date().toISOString().slice(0, 10) + 'T00:00:00Z').getTime();
      const start = today - (DAYS - 1) * 86_400_000;
      const days = Array.from({ length: DAYS }, (_, i) => new Date(start + i * 86_400_000).toISOString().slice(0, 10));
      const cacheKey = `${currency}:${start}`;
      const cached = closedDays.get(merchantId);
      const closed =
        cached && cached.key === cacheKey && cached.expires > Date.now()
          ? cached.days
          : await dailyTotals(ctx.sql, merchantId, currency, start, today).then((fresh) => {
              if (closedDays.size >= CACHE_MAX) closedDays.clear();
              closedDays.set(merchantId, { key: cacheKey, expires: Date.now() + CLOSED_DAYS_TTL_MS, days: fresh });
              return fresh;
            });
      const [current, top] = await Promise.all([
        dailyTotals(ctx.sql, merchantId, currency, today, null),
        ctx.sql<{ id: string; display_name: string; email: string; attributed_revenue: string; conversions: number }[]>`
          select a.id, a.display_name, a.email, s.attributed_revenue::text, s.conversions
          from (
            -- The five first, then their names: joining every affiliate before sorting took ten times as long.
            select affiliate_id, attributed_revenue, conversions from affiliate_stats
            where merchant_id = ${merchantId} and currency = ${currency}
            order by attributed_revenue desc, affiliate_id limit 5
          ) s join affiliates a on a.merchant_id = ${merchantId} and a.id = s.affiliate_id
          order by s.attributed_revenue desc, a.id`,
      ]);
      const totals = (d: string): DayTotals | undefined => current.get(d) ?? closed.get(d);
      return {
        currency,
        days,
        conversions: days.map((d) => totals(d)?.conversions ?? 0),
        revenue: days.map((d) => totals(d)?.revenue ?? 0),
        commissions: days.map((d) => totals(d)?.commissions ?? 0),
        top_affiliates: top.map((a) => ({
          id: a.id,
          display_name: a.display_name,
          email: a.email,
          attributed_revenue: Number(a.attributed_revenue),
          conversions: a.conversions,
        })),
      };
    },
  }),
];
