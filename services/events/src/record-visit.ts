import type { TrackingClient } from '@platform/shared/catalogue';
import type { Queryable } from '@platform/shared/db';
import { notFound } from '@platform/shared/errors';
import { isId, newId } from '@platform/shared/ids';
import type { TrackedVisit } from '@platform/shared/schemas/tracking';
import type { MerchantWithSettings } from './queries/merchants.ts';
import { findApprovedAffiliateIdBySlug } from './queries/affiliates.ts';
import { findVisit, insertVisit } from './queries/visits.ts';
import { hashIp, USER_AGENT_MAX } from './domain/visits.ts';
import { clickDetails } from './domain/clicks.ts';

/**
 * Records a referral visit for the merchant's approved affiliate with that slug, or keeps the browser's current
 * visit when it is a live one for the same affiliate (a reload, or the landing page after a referral link), so one
 * click is one visit. A different affiliate's link starts a new visit: the last click wins.
 */
export async function recordVisit(
  sql: Queryable,
  ipHashKey: Buffer,
  v: {
    merchant: MerchantWithSettings;
    slug: string;
    currentVisitId: string | null;
    client: TrackingClient;
    fingerprint: string | null;
    landingUrl: string | null;
  },
): Promise<TrackedVisit & { reused: boolean }> {
  const { merchant } = v;
  const windowDays = merchant.settings.attribution_window_days;
  const affiliateId = await findApprovedAffiliateIdBySlug(sql, merchant.id, v.slug);
  if (!affiliateId) throw notFound('referral link');
  if (v.currentVisitId !== null && isId('vis', v.currentVisitId)) {
    const current = await findVisit(sql, merchant.id, v.currentVisitId, windowDays);
    if (current && current.within_window && current.affiliate_id === affiliateId) {
      return { visit_id: current.id, max_age_seconds: Math.max(0, current.remaining_seconds), reused: true };
    }
  }
  const id = newId('vis');
  await insertVisit(sql, {
    id,
    merchantId: merchant.id,
    affiliateId,
    ipHash: v.client.ip ? hashIp(ipHashKey, v.client.ip) : null,
    userAgent: v.client.user_agent ? v.client.user_agent.slice(0, USER_AGENT_MAX) : null,
    fingerprint: v.fingerprint,
    landingUrl: v.landingUrl,
    details: clickDetails(v.client),
    windowDays,
  });
  return { visit_id: id, max_age_seconds: windowDays * 86_400, reused: false };
}
