import type { Sql } from '@platform/shared/db';
import { reserveWait } from '../../http/accounts/queries.ts';
import { SIGNIN_WINDOW_SECONDS } from '../../http/accounts/signin-limit.ts';

/**
 * How many portal links may be asked for per 15 minutes, counted in Postgres by the dashboard's reservation function
 * (migration 026), so every replica sees the same counts, under subjects of the portal's own:
 * - per address from one client IP: the tight limit. Anyone may ask for anyone's link, so a limit per address alone
 *   would let a stranger keep an affiliate from ever getting one; per address and IP, the stranger uses up only
 *   their own share;
 * - per address from anywhere: a higher ceiling, so that many IPs together still cannot make the platform mail one
 *   address without bound;
 * - per client IP, across addresses.
 * A request is counted against all three or, when one is full, none. Every request counts whether or not the address
 * is an affiliate's, so the limits say nothing about which addresses exist.
 */
export const PORTAL_LINK_LIMITS = { perAddressAndIp: 5, perAddress: 20, perIp: 30 };

export function createPortalLinkLimiter(sql: Sql) {
  return {
    /** Counts one request for a link; answers 0, or the seconds to wait before another is accepted. */
    async reserve(email: string, ip: string): Promise<number> {
      const address = email.toLowerCase();
      const subjects = [
        `portal-link:address+ip:${address} ${ip}`,
        `portal-link:address:${address}`,
        `portal-link:ip:${ip}`,
      ];
      const limits = [PORTAL_LINK_LIMITS.perAddressAndIp, PORTAL_LINK_LIMITS.perAddress, PORTAL_LINK_LIMITS.perIp];
      return reserveWait(sql, subjects, limits, SIGNIN_WINDOW_SECONDS);
    },
  };
}

export type PortalLinkLimiter = ReturnType<typeof createPortalLinkLimiter>;
