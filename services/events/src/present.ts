import type { ConversionRecorded } from '@platform/shared/catalogue';
import type { Coupon } from '@platform/shared/schemas/coupons';
import { CLICK_DEVICES, type Click, type ClickDevice } from '@platform/shared/schemas/clicks';
import type { ConversionEvent, StoredConversionEvent } from '@platform/shared/schemas/events-api';
import type { CouponRow } from './queries/coupons.ts';
import type { ConversionEventRow } from './queries/conversion-events.ts';
import type { ClickRow, VisitRow } from './queries/visits.ts';

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

/**
 * GET /api/v1/events: the event as POST answers it, with how it was credited and its commissions. A cookie credits
 * through the visit it names (the click); a coupon through the code sent, which matched one of the affiliate's.
 */
export function presentStoredEvent(row: ConversionEventRow, commissionIds: string[]): StoredConversionEvent {
  return {
    ...presentEvent(row),
    attribution:
      row.attributed_by === null
        ? null
        : {
            method: row.attributed_by,
            click_id: row.attributed_by === 'cookie' ? row.visit_id : null,
            coupon: row.attributed_by === 'coupon' ? row.coupon : null,
          },
    commission_ids: commissionIds,
  };
}

/** A visit as a click: never its IP hash, user agent or fingerprint. */
export function presentClick(row: ClickRow): Click {
  return {
    id: row.id,
    object: 'click',
    affiliate_id: row.affiliate_id,
    landing_url: row.landing_url,
    referrer: row.referrer_host,
    country: row.country,
    // Visits recorded before devices were (migration 056) have none: unknown, like an unrecognised user agent.
    device: isClickDevice(row.device) ? row.device : 'other',
    converted: row.converted,
    created_at: row.created_at.toISOString(),
  };
}

const isClickDevice = (value: string | null): value is ClickDevice =>
  (CLICK_DEVICES as readonly (string | null)[]).includes(value);

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
