import type { ConversionRecorded } from '@platform/shared/catalogue';
import type { Coupon } from '@platform/shared/schemas/coupons';
import type { ConversionEvent } from '@platform/shared/schemas/events-api';
import type { CouponRow } from './queries/coupons.ts';
import type { ConversionEventRow } from './queries/conversion-events.ts';
import type { VisitRow } from './queries/visits.ts';

/**
 * The only ways events and coupons leave the service (API responses and the conversion.recorded message): field by
 * field, so a column added to a table is never exposed by accident.
 */
export function presentEvent(row: ConversionEventRow): ConversionEvent {
  return {
    id: row.id,
    event_type: row.event_type,
    external_id: row.external_id,
    cookie_id: row.cookie_id,
    coupon: row.coupon,
    // JSON carries money as numbers; the text has at most 15 significant digits, so the number is exact.
    amount: Number(row.amount),
    currency: row.currency,
    payload: row.payload,
    affiliate_id: row.affiliate_id,
    attributed_by: row.attributed_by,
    created_at: row.created_at.toISOString(),
  };
}

export function presentCoupon(row: CouponRow): Coupon {
  return {
    id: row.id,
    code: row.code,
    affiliate_id: row.affiliate_id,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * The `visit` of `conversion.recorded` (ConversionRecordedSchema). The rest of its data is built in SQL from the
 * inserted row (queries/conversion-events.ts insertEventWithOutbox): the amount stays exact decimal text.
 */
export function conversionVisit(visit: VisitRow | undefined): ConversionRecorded['visit'] {
  return visit ? { id: visit.id, ip_hash: visit.ip_hash, fingerprint: visit.fingerprint } : null;
}
