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

/**
 * The Overview's figures for the last 30 UTC days. Each sum reads one index range: processed conversions by their
 * time-sortable event ids (primary key), commissions by (merchant_id, created_at); top affiliates from the per-
 * affiliate totals the commissions service keeps for tiers.
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
      const [merchant] = await ctx.sql<{ settings: unknown }[]>`select settings from merchants where id = ${merchantId}`;
      const currency = withDefaults(merchant?.settings).currency;
      const today = new Date(new Date().toISOString().slice(0, 10) + 'T00:00:00Z').getTime();
      const start = today - (DAYS - 1) * 86_400_000;
      const days = Array.from({ length: DAYS }, (_, i) => new Date(start + i * 86_400_000).toISOString().slice(0, 10));
      const [conversions, commissions, top] = await Promise.all([
        ctx.sql<{ day: string; conversions: number; revenue: string | null }[]>`
          select (occurred_at at time zone 'utc')::date::text as day,
                 count(*) filter (where affiliate_id is not null and revenue_counted is not null)::int as conversions,
                 sum(revenue_counted) filter (where not revenue_reversed and currency = ${currency})::text as revenue
          from processed_conversions
          where merchant_id = ${merchantId} and event_id >= ${idFloor('evt', start)} and occurred_at >= ${new Date(start)}
          group by 1`,
        ctx.sql<{ day: string; amount: string | null }[]>`
          select (created_at at time zone 'utc')::date::text as day, sum(amount) filter (where status <> 'voided')::text as amount
          from commissions
          where merchant_id = ${merchantId} and created_at >= ${new Date(start)} and currency = ${currency}
          group by 1`,
        ctx.sql<{ id: string; display_name: string; email: string; attributed_revenue: string; conversions: number }[]>`
          select a.id, a.display_name, a.email, s.attributed_revenue::text, s.conversions
          from affiliate_stats s join affiliates a on a.merchant_id = s.merchant_id and a.id = s.affiliate_id
          where s.merchant_id = ${merchantId} and s.currency = ${currency}
          order by s.attributed_revenue desc, a.id limit 5`,
      ]);
      const byDay = <R extends { day: string }>(rows: R[]) => new Map(rows.map((r) => [r.day, r]));
      const conv = byDay(conversions);
      const comm = byDay(commissions);
      return {
        currency,
        days,
        conversions: days.map((d) => conv.get(d)?.conversions ?? 0),
        revenue: days.map((d) => Number(conv.get(d)?.revenue ?? 0)),
        commissions: days.map((d) => Number(comm.get(d)?.amount ?? 0)),
        top_affiliates: top.map((a) => ({ id: a.id, display_name: a.display_name, email: a.email, attributed_revenue: Number(a.attributed_revenue), conversions: a.conversions })),
      };
    },
  }),
];
