import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { createHmacKey } from '@platform/shared/crypto';
import type { Sql } from '@platform/shared/db';
import { hashToken, newToken } from '../../http/accounts/tokens.ts';
import {
  deleteExpiredPortalSessions,
  deletePortalSession,
  insertPortalSession,
  livePortalSession,
  switchPortalSession,
} from './queries/sessions.ts';

/**
 * Affiliate portal sessions (migration 062's portal_sessions): the same model as the dashboard's (a random cookie,
 * only its SHA-256 in Postgres, a CSRF token that is an HMAC of it) but a table, cookie, path, header and HMAC key of
 * their own, so that neither kind of session can stand in for the other. A session is live only while its affiliate
 * is approved and still has the session's address: suspending an affiliate, or changing its e-mail, ends it at once.
 */
export const PORTAL_COOKIE = 'portal_session';
export const PORTAL_CSRF_HEADER = 'x-portal-csrf';

/** A mailed link's session lasts a week; an embedded one (the merchant's app signs in again each time) 8 hours. */
const SESSION_HOURS = { mailed: 24 * 7, embedded: 8 };
/** How long a fresh payout-details link lets its session change the payout details. */
export const PAYOUT_DETAILS_MINUTES = 15;

export interface PortalSession {
  email: string;
  merchantId: string;
  affiliateId: string;
  /** Opened by an embed link: this affiliate only, no switcher, and a cookie that works framed. */
  embedded: boolean;
  returnUrl: string | null;
  payoutDetailsUntil: Date | null;
  csrfToken: string;
}

export interface NewPortalSession {
  email: string;
  merchantId: string;
  affiliateId: string;
  embedded: boolean;
  returnUrl: string | null;
  payoutDetails: boolean;
}

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export function createPortalSessionStore(sql: Sql, masterKey: Buffer) {
  const csrfKey = createHmacKey(masterKey, 'portal-csrf');
  const csrfFor = (token: string) => createHmac('sha256', csrfKey).update(token).digest('base64url');
  return {
    async create(s: NewPortalSession): Promise<{ token: string; expiresAt: Date }> {
      const token = newToken();
      const hours = s.embedded ? SESSION_HOURS.embedded : SESSION_HOURS.mailed;
      const expiresAt = await insertPortalSession(sql, {
        tokenHash: hashToken(token),
        email: s.email.toLowerCase(),
        merchantId: s.merchantId,
        affiliateId: s.affiliateId,
        onlyAffiliate: s.embedded,
        returnUrl: s.returnUrl,
        payoutDetailsMinutes: s.payoutDetails ? PAYOUT_DETAILS_MINUTES : null,
        hours,
      });
      // Expired sessions of anyone are removed as new ones are made: the table stays the size of the live ones.
      await deleteExpiredPortalSessions(sql);
      return { token, expiresAt };
    },
    async resolve(token: string): Promise<PortalSession | null> {
      if (!TOKEN_SHAPE.test(token)) return null;
      const row = await livePortalSession(sql, hashToken(token));
      if (!row) return null;
      return {
        email: row.email,
        merchantId: row.merchant_id,
        affiliateId: row.affiliate_id,
        embedded: row.only_affiliate,
        returnUrl: row.return_url,
        payoutDetailsUntil: row.payout_details_until,
        csrfToken: csrfFor(token),
      };
    },
    /** Shows another programme of the same person; a fresh payout-details link was for the one before only. */
    async switchTo(token: string, to: { merchantId: string; affiliateId: string }): Promise<void> {
      await switchPortalSession(sql, hashToken(token), to);
    },
    async end(token: string): Promise<void> {
      if (TOKEN_SHAPE.test(token)) await deletePortalSession(sql, hashToken(token));
    },
    checkCsrf(token: string, presented: string | undefined): boolean {
      if (!presented) return false;
      const expected = Buffer.from(csrfFor(token));
      const given = Buffer.from(presented);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

export type PortalSessionStore = ReturnType<typeof createPortalSessionStore>;

/** The portal cookie's value, if the request carries one. */
export function portalToken(req: Request): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === PORTAL_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * HttpOnly, on /portal only. A mailed link's session is SameSite=Lax: the link is a top-level navigation from a mail,
 * which Strict would send without the cookie on the redirect. An embedded session must work inside the merchant's
 * iframe, a third-party context: SameSite=None with Secure, and Partitioned (CHIPS) so that it is kept for that
 * embedding site only and never seen by the portal opened anywhere else.
 */
export function setPortalCookie(res: Response, token: string, expiresAt: Date, embedded: boolean, secure: boolean) {
  res.cookie(PORTAL_COOKIE, token, {
    httpOnly: true,
    path: '/portal',
    expires: expiresAt,
    ...(embedded ? { sameSite: 'none', secure: true, partitioned: true } : { sameSite: 'lax', secure }),
  });
}

export function clearPortalCookie(res: Response, embedded: boolean, secure: boolean) {
  res.clearCookie(PORTAL_COOKIE, {
    httpOnly: true,
    path: '/portal',
    ...(embedded ? { sameSite: 'none', secure: true, partitioned: true } : { sameSite: 'lax', secure }),
  });
}
