import type { Queryable } from '@platform/shared/db';
import { isId } from '@platform/shared/ids';
import type { AttributionMethod } from '@platform/shared/schemas/events-api';
import { findCouponOwner } from './queries/coupons.ts';
import { findVisit, type VisitRow } from './queries/visits.ts';

export interface Attribution {
  affiliateId: string | null;
  by: AttributionMethod | null;
  /** The visit cookie_id names, when it is one of this merchant's: fraud rules look at it even when it did not win. */
  visit: VisitRow | undefined;
}

/**
 * Credits an event: the cookie first (a visit of this merchant made within the attribution window), then the
 * coupon. Only an affiliate that is approved now is credited; anything else falls through to the next method,
 * and when nothing matches the event is stored without an affiliate.
 */
export async function attribute(
  sql: Queryable,
  merchantId: string,
  windowDays: number,
  cookieId: string | undefined,
  coupon: string | undefined,
): Promise<Attribution> {
  const visit = cookieId !== undefined && isId('vis', cookieId) ? await findVisit(sql, merchantId, cookieId, windowDays) : undefined;
  if (visit && visit.within_window && visit.affiliate_status === 'approved') {
    return { affiliateId: visit.affiliate_id, by: 'cookie', visit };
  }
  const owner = coupon !== undefined ? await findCouponOwner(sql, merchantId, coupon) : undefined;
  if (owner && owner.status === 'approved') return { affiliateId: owner.affiliate_id, by: 'coupon', visit };
  return { affiliateId: null, by: null, visit };
}
