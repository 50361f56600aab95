import type { Sql } from '@platform/shared/db';
import { reserveHourly, SIGNUP_WINDOW_SECONDS } from '../../http/accounts/signup-limit.ts';
import { fullWindowWait } from './queries/apply-limits.ts';

/**
 * Applications allowed in an hour (docs/PORTAL.md, "Programme page and applications"), counted in Postgres by the
 * sign-up limiter's statement (migration 026), so every replica sees the same counts:
 * - per client address, any programme: every application counts, made or not (it is the sender's own budget);
 * - per e-mail domain and client address, per programme, and
 * - per e-mail domain, per programme (a ceiling for many addresses together):
 *   only applications that made an affiliate count. An address that is already an affiliate makes nothing and mails
 *   nothing, so posting it again and again must not use up a shared domain (gmail.com) for everyone else; and one
 *   client cannot fill the domain's ceiling on its own, as its share is far below it.
 */
export const APPLY_LIMITS = { perIp: 10, perDomainAndIp: 5, perDomain: 100 };

/** The largest count Postgres' integer holds: the limit of a charge that must always count. */
const NO_LIMIT = 2 ** 31 - 1;

export function createApplyLimiter(sql: Sql, limits = APPLY_LIMITS) {
  const domainSubjects = (merchantId: string, email: string, ip: string) => {
    const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
    return [`apply-domain+ip:${merchantId}:${domain} ${ip}`, `apply-domain:${merchantId}:${domain}`];
  };
  return {
    /**
     * Counts the application against its client address, and checks (without counting) its domain's limits; null
     * when it may go on, else the seconds until one may be made.
     */
    async admit(merchantId: string, email: string, ip: string): Promise<number | null> {
      const ipWait = await reserveHourly(sql, [`apply-ip:${ip}`], [limits.perIp]);
      if (ipWait !== null) return ipWait;
      const subjects = domainSubjects(merchantId, email, ip);
      return fullWindowWait(sql, subjects, [limits.perDomainAndIp, limits.perDomain], SIGNUP_WINDOW_SECONDS);
    },
    /**
     * Counts an application that made an affiliate against its domain. It always counts: applications checked at
     * the same moment may together pass a limit by a few, and the next one is then refused.
     */
    async made(merchantId: string, email: string, ip: string): Promise<void> {
      await reserveHourly(sql, domainSubjects(merchantId, email, ip), [NO_LIMIT, NO_LIMIT]);
    },
  };
}
