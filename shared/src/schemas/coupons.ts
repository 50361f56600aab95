import { Type, type Static } from '@sinclair/typebox';
import { Cursor, Limit, ListOf, Timestamp } from './common.ts';

const CouponCode = Type.String({
  pattern: '^[A-Za-z0-9_-]{2,64}$',
  description: 'the code customers enter; unique per merchant, compared case-insensitively',
  examples: ['JANE10'],
});

const AffiliateId = Type.String({
  pattern: '^aff_[0-9a-hjkmnp-tv-z]{26}$',
  description: 'an affiliate of this merchant',
  examples: ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c'],
});

export const Coupon = Type.Object(
  {
    id: Type.String({ description: 'identifier', examples: ['cpn_01jd3t6m0s2e4w5x6y7z8a9b0c'] }),
    code: CouponCode,
    affiliate_id: Type.String({
      description: 'the affiliate credited for events carrying this code',
      examples: ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c'],
    }),
    created_at: Timestamp('creation time'),
  },
  { additionalProperties: false, $id: 'Coupon' },
);
export type Coupon = Static<typeof Coupon>;

export const CouponList = ListOf(Coupon, 'CouponList');

export const CreateCouponBody = Type.Object(
  { code: CouponCode, affiliate_id: AffiliateId },
  { additionalProperties: false, $id: 'CreateCoupon' },
);
export type CreateCouponBody = Static<typeof CreateCouponBody>;

export const ListCouponsQuery = Type.Object(
  {
    affiliate_id: Type.Optional(AffiliateId),
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);

export const CouponIdParams = Type.Object(
  { coupon_id: Type.String({ description: 'a coupon id' }) },
  { additionalProperties: false },
);
