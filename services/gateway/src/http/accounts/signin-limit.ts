import type { Sql } from '@platform/shared/db';
import { clearSubject, releaseAttempt, reserveAttempt } from './queries.ts';

/**
 * Password attempts (sign-in, and the password entered again to reveal a webhook secret), counted in Postgres so
 * that every gateway replica sees the same counts. An attempt is reserved before its password is checked, by one
 * statement (migration 069's dashboard_signin_reserve_at) that counts it against all of its subjects or, when one of
 * them is full, against none and answers how long to wait. So however many attempts arrive at once, no more than a
 * subject's limit are checked in its window (which opened at its first attempt), and the attempts refused for one
 * subject use up nothing of the others'.
 *
 * The subjects: the account from this client address (the tight limit: a guesser at one address cannot lock the
 * owner out from another), the account from anywhere (a higher bound on guessing from many addresses) and the
 * address across accounts (an office behind one address signs in many users). The account is the e-mail as typed,
 * whether or not a user has it, so that the answers do not tell which accounts exist.
 */
export const SIGNIN_WINDOW_SECONDS = 900;

export interface SigninLimits {
  perAccountAndIp: number;
  perAccount: number;
  perIp: number;
}

/** A reserved attempt: what to release if its password turns out right or it was never checked. */
export interface Reservation {
  subjects: string[];
  /** The accounts-from-this-address subject, cleared by a right password. */
  accountAndIp: string;
  /**
   * The reservation's time as Postgres wrote it, kept and sent back as text: the driver's timestamp type goes through
   * a JavaScript Date, which drops the microseconds, and the window would then seem to start after the reservation.
   */
  at: string;
}

export type Reserved = { reservation: Reservation } | { retryAfter: number };

export function createSigninLimiter(sql: Sql, limits: SigninLimits) {
  const subjects = (email: string, ip: string) => {
    const account = email.toLowerCase();
    return [
      { subject: `account+ip:${account} ${ip}`, max: limits.perAccountAndIp },
      { subject: `account:${account}`, max: limits.perAccount },
      { subject: `ip:${ip}`, max: limits.perIp },
    ];
  };
  /**
   * The attempt did not guess (the password was right, or it was never checked): it no longer counts. A right
   * password also forgives this address's earlier typos on the account; others' attempts still count.
   */
  const release = async (reservation: Reservation, passwordWasRight: boolean): Promise<void> => {
    // A window that started again after the reservation does not hold it.
    await releaseAttempt(sql, reservation.subjects, reservation.at);
    if (passwordWasRight) await clearSubject(sql, reservation.accountAndIp);
  };
  return {
    release,
    /** Counts one attempt before its password is checked, or says how many seconds until one may be made. */
    async reserve(email: string, ip: string): Promise<Reserved> {
      const checks = subjects(email, ip);
      const names = checks.map((c) => c.subject);
      const row = await reserveAttempt(
        sql,
        names,
        checks.map((c) => c.max),
        SIGNIN_WINDOW_SECONDS,
      );
      if (row.wait > 0) return { retryAfter: row.wait };
      return { reservation: { subjects: names, accountAndIp: names[0]!, at: row.at } };
    },
    /**
     * The reserved attempt's check. One that could not be made (the process's password work was full, the database
     * failed) guessed nothing, so its reservation is released before the error goes on.
     */
    async checking<T>(reservation: Reservation, check: () => Promise<T>): Promise<T> {
      try {
        return await check();
      } catch (err) {
        // The check's own error is the one to report, whether or not the release got through.
        await release(reservation, false).catch(() => undefined);
        throw err;
      }
    },
  };
}

export type SigninLimiter = ReturnType<typeof createSigninLimiter>;
