import { createHmac } from 'node:crypto';
import type { MerchantWithSettings } from '../queries/merchants.ts';

/** The longest user agent kept with a visit; a longer one is cut. */
export const USER_AGENT_MAX = 512;

/**
 * The stored stand-in for a visitor's IP: an HMAC keyed from ENCRYPTION_KEY, so equal IPs compare equal (fraud
 * rules count conversions per IP) while the address itself cannot be recovered or looked up without the key.
 * An IPv4 address seen through an IPv6 socket (::ffff:1.2.3.4) hashes like the plain IPv4 one.
 */
export function hashIp(key: Buffer, ip: string): string {
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
