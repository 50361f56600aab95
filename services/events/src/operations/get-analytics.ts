import { api } from '@platform/shared/api';
import { invalidInput } from '@platform/shared/errors';
import { sumInCurrency } from '@platform/shared/money';
import { defineOperation } from '@platform/shared/operation';
import { loadMerchantSettings } from '@platform/shared/schemas/merchant-settings';
import type { Analytics, AnalyticsRow } from '@platform/shared/schemas/analytics';
import { analyticsRequest, bucketKey, isTimeGrouping } from '../domain/analytics.ts';
import {
  affiliateNames,
  currencySums,
  dimensionSums,
  seriesSums,
  type AnalyticsScope,
  type MeasureSums,
} from '../queries/analytics.ts';

/**
 * GET /api/v1/analytics: sums of the rollups (docs/ANALYTICS.md), never of raw clicks and events. Another
 * merchant's affiliate_id filters to nothing, as the lists' filters do. Revenue and commissions are in `currency`;
 * conversions in other currencies are counted and their sums reported apart, unconverted.
 */
export const getAnalyticsOperation = () =>
  defineOperation(api.getAnalytics, async (ctx, { query }) => {
    const settings = await loadMerchantSettings(ctx.sql, ctx.merchantId);
    if (!settings) throw new Error('the merchant of an authenticated key has no row');
    const req = analyticsRequest(query, settings.currency, new Date());
    const scope: AnalyticsScope = {
      merchantId: ctx.merchantId,
      start: req.start,
      end: req.end,
      affiliateId: req.affiliateId,
      currency: req.currency,
    };
    const money = (m: MeasureSums) => ({
      clicks: m.clicks,
      conversions: m.conversions,
      revenue: sumInCurrency(m.revenue, req.currency),
      commissions: sumInCurrency(m.commissions, req.currency),
    });

    let data: AnalyticsRow[];
    const groupBy = req.groupBy;
    if (isTimeGrouping(groupBy)) {
      const rows = await seriesSums(ctx.sql, scope, groupBy, req.timezone).catch((err: unknown) => {
        // A name this Node knows and Postgres does not (their copies of the time zone database differ).
        if ((err as { code?: string }).code === '22023' && /time zone/.test(String(err)))
          throw invalidInput('timezone', 'must be an IANA time zone name, such as Europe/Paris', { cause: err });
        throw err;
      });
      data = rows.map((r) => ({ key: bucketKey(r.local, r.instant), ...money(r) }));
    } else {
      const rows = await dimensionSums(ctx.sql, scope, groupBy, req.limit);
      const names =
        groupBy === 'affiliate'
          ? await affiliateNames(
              ctx.sql,
              ctx.merchantId,
              rows.map((r) => r.key).filter((k) => k !== ''),
            )
          : null;
      data = rows.map((r) => ({
        key: r.key === '' ? null : r.key,
        ...(names ? { display_name: names.get(r.key) ?? null } : {}),
        ...money(r),
      }));
    }
    const others = (await currencySums(ctx.sql, scope)).filter((c) => c.currency !== req.currency);
    const body: Analytics = {
      object: 'analytics',
      group_by: groupBy,
      start: req.start.toISOString(),
      end: req.end.toISOString(),
      timezone: req.timezone,
      currency: req.currency,
      data,
      other_currencies: others.map((c) => ({
        currency: c.currency,
        conversions: c.conversions,
        revenue: sumInCurrency(c.revenue, c.currency),
        commissions: sumInCurrency(c.commissions, c.currency),
      })),
    };
    return { outcome: 'ok', body };
  });
