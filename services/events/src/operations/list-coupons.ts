import { api } from '@platform/shared/api';
import { keysetPage } from '@platform/shared/cursor';
import { defineOperation } from '@platform/shared/operation';
import type { EventsDeps } from '../deps.ts';
import { presentCoupon } from '../present.ts';
import { listCoupons } from '../queries/coupons.ts';

export const listCouponsOperation = (deps: EventsDeps) =>
  defineOperation(api.listCoupons, async (ctx, { query }) => ({
    outcome: 'ok',
    body: await keysetPage({
      key: deps.cursorKey,
      scope: { merchantId: ctx.merchantId, list: 'coupons', filters: { affiliate_id: query.affiliate_id ?? null } },
      cursor: query.cursor,
      limit: query.limit ?? 25,
      fetch: (after, limit) => listCoupons(ctx.sql, ctx.merchantId, { affiliateId: query.affiliate_id, after, limit }),
      present: presentCoupon,
    }),
  }));
