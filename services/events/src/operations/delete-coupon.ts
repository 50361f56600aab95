import { api } from '@platform/shared/api';
import { notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { deleteCoupon } from '../queries/coupons.ts';

/** A hard delete: events recorded with the code keep it and their attribution; the code is free again. */
export const deleteCouponOperation = () =>
  defineOperation(api.deleteCoupon, async (ctx, { params }) => {
    // A malformed id names no row: 404, like another merchant's coupon.
    if (!isId('cpn', params.coupon_id) || !(await deleteCoupon(ctx.sql, ctx.merchantId, params.coupon_id)))
      throw notFound('coupon');
    ctx.log.info('coupon deleted', { coupon_id: params.coupon_id });
    return { outcome: 'no_content' };
  });
