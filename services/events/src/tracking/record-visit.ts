import { createHmac } from 'node:crypto';
import type { TrackingClient } from '@platform/shared/catalogue';
import type { Queryable } from '@platform/shared/db';
import { notFound } from '@platform/shared/errors';
import { isId, newId } from '@platform/shared/ids';
import type { TrackedVisit } from '@platform/shared/schemas/tracking';
import type { MerchantWithSettings } from '../queries/merchants.ts';
import { findApprovedAffiliateIdBySlug } from '../queries/affiliates.ts';
import { findVisit, insertVisit } from '../queries/visits.ts';

const USER_AGENT_MAX = 512;

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
    windowDays,
  });
  return { visit_id: id, max_age_seconds: windowDays * 86_400, reused: false };
}

/**
 * The stored stand-in for a visitor's IP: an HMAC keyed from ENCRYPTION_KEY, so equal IPs compare equal (fraud
 * rules count conversions per IP) while the address itself cannot be recovered or looked up without the key.
 * An IPv4 address seen through an IPv6 socket (::ffff:1.2.3.4) hashes like the plain IPv4 one.
 */
function hashIp(key: Buffer, ip: string): string {
  const normalized = ip
    .trim()
    .toLowerCase()
    .replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
  return createHmac('sha256', key).update(normalized).digest('base64url');
}

/** The merchant's landing page with ?via={slug}; undefined when none is configured or it is not http(s). */
export function landingUrlFor(merchant: MerchantWithSettings, slug: string): string | undefined {
  const configured = merchant.settings.landing_url;
  if (!configured) return undefined;
  let url: URL;
  try {
    url = new URL(configured);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  url.searchParams.set('via', slug);
  return url.toString();
}
