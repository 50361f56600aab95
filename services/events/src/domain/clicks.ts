import { isbot } from 'isbot';
import UAParser from 'ua-parser-js';
import type { ClickDevice } from '@platform/shared/schemas/clicks';

/**
 * What a referral click is read back by (GET /api/v1/clicks) and grouped by in analytics, derived from what the
 * gateway saw of the browser. Each is a summary that cannot name the visitor: the referring site's host (no path or
 * query, which can carry a search or a session), a country code, a class of device. The IP and the user agent
 * themselves are never answered by any API.
 */
export interface ClickDetails {
  referrerHost: string | null;
  country: string | null;
  device: ClickDevice;
}

export function clickDetails(client: {
  user_agent: string | null;
  referrer: string | null;
  country: string | null;
}): ClickDetails {
  return {
    referrerHost: referrerHost(client.referrer),
    country: countryCode(client.country),
    device: deviceClass(client.user_agent),
  };
}

/** The longest host name DNS allows; a longer "host" is no site's. */
const HOST_MAX = 253;

/** The host of an http(s) referrer, in lower case without a trailing dot; null for none, another scheme or nonsense. */
export function referrerHost(referrer: string | null): string | null {
  if (!referrer) return null;
  let url: URL;
  try {
    url = new URL(referrer);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  // URL already lower-cases the host and turns an internationalised one into its punycode form.
  const host = url.hostname.replace(/\.$/, '');
  return host.length > 0 && host.length <= HOST_MAX ? host : null;
}

/**
 * An ISO 3166-1 alpha-2 code in upper case, from the header the ingress or CDN sets; null for anything else. CDNs
 * mark what they could not place with codes that name no country (Cloudflare's `XX` unknown and `T1` Tor): those
 * are no country either.
 */
export function countryCode(header: string | null): string | null {
  if (!header) return null;
  const code = header.trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(code) || NOT_A_COUNTRY.has(code)) return null;
  return code;
}

/** User-assigned codes (ISO 3166-1 reserves them for private use) that CDNs put where they found no country. */
const NOT_A_COUNTRY = new Set(['XX', 'ZZ']);

/**
 * The class of device of a user agent: `bot` for crawlers, link previewers, monitors and HTTP libraries (isbot's
 * list, which is kept up to date), else ua-parser-js's device type: `mobile` (phones and wearables), `tablet`, or
 * `desktop` for a known browser or operating system that names no device (desktop browsers never do); `other` for
 * consoles, TVs, embedded devices, an empty user agent and what neither library recognises.
 */
export function deviceClass(userAgent: string | null): ClickDevice {
  if (!userAgent || userAgent.trim() === '') return 'other';
  if (isbot(userAgent)) return 'bot';
  const { device, browser, os } = new UAParser(userAgent).getResult();
  switch (device.type) {
    case 'mobile':
    case 'wearable':
      return 'mobile';
    case 'tablet':
      return 'tablet';
    case undefined:
      return browser.name !== undefined || os.name !== undefined ? 'desktop' : 'other';
    default:
      return 'other';
  }
}
