import type { Sql } from '@platform/shared/db';
import { SIGNIN_WINDOW_SECONDS } from '../dashboard/signin-limit.ts';

/**
 * How many portal links one address and one client IP may ask for per 15 minutes, counted in Postgres by the
 * dashboard's reservation function (migration 026), so every replica sees the same counts, under subjects of the
 * portal's own. Every request counts whether or not the address is an affiliate's, so the limit says nothing about
 * which addresses exist; and it bounds the mails one person can make the platform send to another.
 */
export const PORTAL_LINK_LIMITS = { perAddress: 5, perIp: 30 };

export function createPortalLinkLimiter(sql: Sql) {
  return {
    /** Counts one request for a link; answers 0, or the seconds to wait before another is accepted. */
    async reserve(email: string, ip: string): Promise<number> {
      const subjects = [`portal-link:address:${email.toLowerCase()}`, `portal-link:ip:${ip}`];
      const limits = [PORTAL_LINK_LIMITS.perAddress, PORTAL_LINK_LIMITS.perIp];
      const [row] = await sql<{ wait: number }[]>`
        select dashboard_signin_reserve(${subjects}::text[], ${limits}::int[], ${SIGNIN_WINDOW_SECONDS}) as wait`;
      return row!.wait;
    },
  };
}

export type PortalLinkLimiter = ReturnType<typeof createPortalLinkLimiter>;
