import { api } from '@platform/shared/api';
import { isUniqueViolation } from '@platform/shared/db';
import { ApiError, invalidInput } from '@platform/shared/errors';
import { newId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { presentCoupon } from '../present.ts';
import { affiliateExists } from '../queries/affiliates.ts';
import { insertCoupon } from '../queries/coupons.ts';

export const createCouponOperation = () =>
  defineOperation(api.createCoupon, async (ctx, { body }) => {
    // Another merchant's affiliate is answered like one that does not exist.
    if (!(await affiliateExists(ctx.sql, ctx.merchantId, body.affiliate_id))) {
      throw invalidInput('affiliate_id', 'is not an affiliate of this merchant');
    }
    try {
      const row = await insertCoupon(ctx.sql, {
        id: newId('cpn'),
        merchantId: ctx.merchantId,
        affiliateId: body.affiliate_id,
        code: body.code,
      });
      ctx.log.info('coupon created', { coupon_id: row.id, affiliate_id: row.affiliate_id });
      return { outcome: 'created', body: presentCoupon(row) };
    } catch (err) {
      if (isUniqueViolation(err, 'coupons_merchant_code')) {
        throw new ApiError(
          'CONFLICT',
          'A coupon with this code already exists',
          [{ path: 'code', message: 'is already taken (codes are case-insensitive)' }],
          { cause: err },
        );
      }
      throw err;
    }
  });
