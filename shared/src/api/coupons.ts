import { operation } from './define.ts';
import { NoContent } from '../schemas/common.ts';
import { Coupon, CouponIdParams, CouponList, CreateCouponBody, ListCouponsQuery } from '../schemas/coupons.ts';

export const couponsApi = {
  listCoupons: operation({
    service: 'events',
    name: 'coupons_list',
    operationId: 'listCoupons',
    method: 'get',
    path: '/api/v1/coupons',
    scope: 'read',
    tag: 'Coupons',
    summary: 'List coupons, newest first',
    query: ListCouponsQuery,
    success: [{ status: 200, schema: CouponList, description: 'a page of coupons' }],
  }),
  createCoupon: operation({
    service: 'events',
    name: 'coupons_create',
    operationId: 'createCoupon',
    method: 'post',
    path: '/api/v1/coupons',
    scope: 'write',
    tag: 'Coupons',
    summary: 'Create a coupon code for an affiliate',
    body: CreateCouponBody,
    success: [{ status: 201, schema: Coupon, description: 'the created coupon' }],
  }),
  deleteCoupon: operation({
    service: 'events',
    name: 'coupons_delete',
    operationId: 'deleteCoupon',
    method: 'delete',
    path: '/api/v1/coupons/{coupon_id}',
    scope: 'write',
    tag: 'Coupons',
    summary: 'Delete a coupon; events already recorded keep their attribution',
    params: CouponIdParams,
    success: [{ status: 204, schema: NoContent, description: 'deleted; no body' }],
  }),
} as const;
