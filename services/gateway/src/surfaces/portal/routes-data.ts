import { api } from '@platform/shared/api';
import { minorUnitDigits } from '@platform/shared/money';
import type { Analytics } from '@platform/shared/schemas/analytics';
import type { Commission } from '@platform/shared/schemas/commissions';
import type { Coupon } from '@platform/shared/schemas/coupons';
import type { Payout } from '@platform/shared/schemas/payouts';
import type { Affiliate } from '@platform/shared/schemas/affiliates';
import type { PortalListQuery } from '@platform/shared/schemas/portal';
import type { Static } from '@sinclair/typebox';
import { handle, type PortalContext } from './define.ts';
import { childrenCount, programmeView } from './queries/programmes.ts';
import { portalSpecs } from './specs.ts';

/**
 * The portal's figures: each from the owning service's operation, asked with the session's merchant and affiliate
 * (calls.ts), and answered field by field: the affiliate sees its own commissions' status, amount and date, never
 * the customer's data beyond the order's last four characters.
 */

/** The merchant's coupons of one affiliate shown at most: a page of the coupons list. */
const COUPONS_SHOWN = 100;
const PAGE_DEFAULT = 25;

const who = (ctx: PortalContext) => ({
  merchantId: ctx.session.merchantId,
  affiliateId: ctx.session.affiliateId,
  requestId: ctx.requestId,
});

/** An amount as the portal shows money: a decimal string with the currency's minor digits. */
const money = (amount: number, currency: string) => amount.toFixed(minorUnitDigits(currency));

/** The order's id as the affiliate may see it: its last four characters. */
const maskOrder = (orderId: string) => `••••${orderId.slice(-4)}`;

type Page<T> = { data: T[]; next_cursor: string | null };
type ListQuery = Static<typeof PortalListQuery>;

const listQuery = (ctx: PortalContext, query: ListQuery) => ({
  affiliate_id: ctx.session.affiliateId,
  limit: query.limit ?? PAGE_DEFAULT,
  ...(query.starting_after ? { cursor: query.starting_after } : {}),
});

const analyticsOf = (ctx: PortalContext, query: Record<string, unknown>) =>
  ctx.call<Analytics>(api.getAnalytics, who(ctx), { query: { ...query, affiliate_id: ctx.session.affiliateId } });

export const dataRoutes = [
  handle(portalSpecs.getHome, async (ctx) => {
    const now = new Date();
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const [affiliate, coupons, month] = await Promise.all([
      ctx.call<Affiliate>(api.getAffiliate, who(ctx), { params: { affiliate_id: ctx.session.affiliateId } }),
      ctx.call<Page<Coupon>>(api.listCoupons, who(ctx), {
        query: { affiliate_id: ctx.session.affiliateId, limit: COUPONS_SHOWN },
      }),
      analyticsOf(ctx, { group_by: 'month', start: monthStart.toISOString(), end: now.toISOString() }),
    ]);
    const sum = (f: (r: Analytics['data'][number]) => number) => month.data.reduce((n, r) => n + f(r), 0);
    return {
      referral_link: affiliate.referral_url,
      coupons: coupons.data.map((c) => ({ code: c.code })),
      currency: month.currency,
      this_month: {
        clicks: sum((r) => r.clicks),
        conversions: sum((r) => r.conversions),
        earnings: money(
          sum((r) => Number(r.commissions)),
          month.currency,
        ),
      },
    };
  }),
  handle(portalSpecs.getPerformance, async (ctx, { query }) => {
    const a = await analyticsOf(ctx, { group_by: 'day', ...query });
    return {
      object: 'analytics',
      group_by: a.group_by,
      start: a.start,
      end: a.end,
      timezone: a.timezone,
      currency: a.currency,
      data: a.data.map((r) => ({
        key: r.key,
        clicks: r.clicks,
        conversions: r.conversions,
        revenue: r.revenue,
        commissions: r.commissions,
      })),
    };
  }),
  handle(portalSpecs.listCommissions, async (ctx, { query }) => {
    const page = await ctx.call<Page<Commission>>(api.listCommissions, who(ctx), { query: listQuery(ctx, query) });
    return {
      data: page.data.map((c) => ({
        id: c.id,
        status: c.status,
        amount: money(c.amount, c.currency),
        currency: c.currency,
        created_at: c.created_at,
        order: maskOrder(c.order_id),
      })),
      has_more: page.next_cursor !== null,
      next_cursor: page.next_cursor,
    };
  }),
  handle(portalSpecs.listPayouts, async (ctx, { query }) => {
    const page = await ctx.call<Page<Payout>>(api.listPayouts, who(ctx), { query: listQuery(ctx, query) });
    return {
      data: page.data.map((p) => ({
        id: p.id,
        status: p.status,
        amount: money(p.amount, p.currency),
        currency: p.currency,
        method: p.method,
        created_at: p.created_at,
        paid_at: p.paid_at,
      })),
      has_more: page.next_cursor !== null,
      next_cursor: page.next_cursor,
    };
  }),
  handle(portalSpecs.getTeam, async (ctx) => {
    const s = ctx.session;
    const [p, children] = await Promise.all([
      programmeView(ctx.sql, s.merchantId, s.affiliateId),
      childrenCount(ctx.sql, s.merchantId, s.affiliateId),
    ]);
    const base = ctx.config.PUBLIC_BASE_URL.replace(/\/+$/, '');
    return {
      recruit_link:
        p?.programme_slug != null
          ? `${base}/p/${encodeURIComponent(p.programme_slug)}?ref=${encodeURIComponent(p.slug)}`
          : null,
      children,
    };
  }),
];
