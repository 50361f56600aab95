import type { Sql } from '@platform/shared/db';
import { reserveWait } from './queries.ts';

/**
 * Sign-ups allowed per client address and per e-mail domain in an hour, counted in Postgres (every replica sees the
 * same counts) by the sign-in limiter's statement (migration 069's dashboard_signin_reserve_at, signin-limit.ts): an
 * attempt is counted against both subjects or, when either is full, against neither, and the answer says how long
 * to wait. Every sign-up counts, accepted or not: each one sends a mail. The rows are purged with the sign-in ones
 * (signin-purge.ts).
 */
export const SIGNUP_WINDOW_SECONDS = 3600;
export const SIGNUP_LIMITS = { perIp: 10, perDomain: 30 };

/**
 * Counts one attempt against every subject, each with its limit per hour (all or none: see above); null when it may
 * go ahead, else the seconds until one may be made. Sign-up's and the password reset's.
 */
export async function reserveHourly(sql: Sql, subjects: string[], limits: number[]): Promise<number | null> {
  const wait = await reserveWait(sql, subjects, limits, SIGNUP_WINDOW_SECONDS);
  return wait > 0 ? wait : null;
}

export function createSignupLimiter(sql: Sql, limits = SIGNUP_LIMITS) {
  return {
    /** Counts one sign-up; null when it may go ahead, else the seconds until one may be made. */
    reserve(email: string, ip: string): Promise<number | null> {
      const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
      return reserveHourly(sql, [`signup-ip:${ip}`, `signup-domain:${domain}`], [limits.perIp, limits.perDomain]);
    },
  };
}

export type SignupLimiter = ReturnType<typeof createSignupLimiter>;
