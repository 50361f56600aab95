import { isId } from '@platform/shared/ids';
import type { AttributionMethod } from '@platform/shared/schemas/events-api';
import { settingsFromText, type MerchantSettings } from '@platform/shared/schemas/merchant-settings';
import type { AttributionContext, VisitSeen } from './queries/attribution-context.ts';
import type { VisitRow } from './queries/visits.ts';

export interface Attribution {
  affiliateId: string | null;
  by: AttributionMethod | null;
  /** The visit cookie_id names, when it is one of this merchant's: fraud rules look at it even when it did not win. */
  visit: VisitRow | undefined;
}

/** The visit id to look up for a cookie_id: null when it cannot be a visit id (it then names no visit). */
export function visitIdOf(cookieId: string | undefined): string | null {
  return cookieId !== undefined && isId('vis', cookieId) ? cookieId : null;
}

/**
 * The merchant's settings and the event's attribution, from what findAttributionContexts read (settings, the
 * cookie's visit and the coupon's owner). Credits the cookie first (a visit of this merchant made within the
 * attribution window), then the coupon. Only an affiliate that is approved now is credited; anything else falls
 * through to the next method, and when nothing matches the event is stored without an affiliate.
 */
export function settingsAndAttribution(
  merchantId: string,
  found: AttributionContext,
): { settings: MerchantSettings; attribution: Attribution } {
  const settings = settingsFromText(merchantId, found.settings);
  const visit = found.visit && withinWindow(found.visit, settings.attribution_window_days);
  return { settings, attribution: credit(visit, found.couponOwner) };
}

/** The visit judged by the merchant's attribution window of now (days of 24 hours). */
function withinWindow({ age_seconds, ...visit }: VisitSeen, windowDays: number): VisitRow {
  const windowSeconds = windowDays * 86_400;
  return {
    ...visit,
    within_window: age_seconds < windowSeconds,
    remaining_seconds: Math.floor(windowSeconds - age_seconds),
  };
}

function credit(visit: VisitRow | undefined, owner: { affiliate_id: string; status: string } | undefined): Attribution {
  if (visit && visit.within_window && visit.affiliate_status === 'approved') {
    return { affiliateId: visit.affiliate_id, by: 'cookie', visit };
  }
  if (owner && owner.status === 'approved') return { affiliateId: owner.affiliate_id, by: 'coupon', visit };
  return { affiliateId: null, by: null, visit };
}
