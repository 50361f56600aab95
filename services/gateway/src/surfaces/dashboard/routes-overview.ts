import type { Sql } from '@platform/shared/db';
import { withDefaults } from '@platform/shared/schemas/merchant-settings';
import { handle, type DashboardContext } from './define.ts';
import { commissionsByDay, conversionsByDay, topAffiliates, type Span } from './queries/overview.ts';
import { storedSettings } from './queries/programme.ts';
import { dashboardSpecs } from './specs.ts';

const DAYS = 30;

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
  span: Span,
): Promise<Map<string, DayTotals>> {
  const [conversions, commissions] = await Promise.all([
    conversionsByDay(sql, merchantId, currency, span),
    commissionsByDay(sql, merchantId, currency, span),
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
  handle(dashboardSpecs.getOverview, async (ctx: DashboardContext) => {
    const merchantId = ctx.session.merchantId;
    const currency = withDefaults(await storedSettings(ctx.sql, merchantId)).currency;
    const today = new Date(new Date().toISOString().slice(0, 10) + 'T00:00:00Z').getTime();
    const start = today - (DAYS - 1) * 86_400_000;
    const days = Array.from({ length: DAYS }, (_, i) => new Date(start + i * 86_400_000).toISOString().slice(0, 10));
    const cacheKey = `${currency}:${start}`;
    const cached = closedDays.get(merchantId);
    const closed =
      cached && cached.key === cacheKey && cached.expires > Date.now()
        ? cached.days
        : await dailyTotals(ctx.sql, merchantId, currency, { from: start, to: today }).then((fresh) => {
            if (closedDays.size >= CACHE_MAX) closedDays.clear();
            closedDays.set(merchantId, { key: cacheKey, expires: Date.now() + CLOSED_DAYS_TTL_MS, days: fresh });
            return fresh;
          });
    const [current, top] = await Promise.all([
      dailyTotals(ctx.sql, merchantId, currency, { from: today, to: null }),
      topAffiliates(ctx.sql, merchantId, currency),
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
  }),
];
