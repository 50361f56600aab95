import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { createHmacKey } from '@platform/shared/crypto';
import type { Queryable, Sql } from '@platform/shared/db';
import type { Role } from './permissions.ts';
import { deleteExpiredSessions, deleteSession, deleteSessionsOf, insertSession, liveSession } from './queries.ts';
import { hashToken, newToken } from './tokens.ts';

/**
 * Dashboard sessions. The cookie holds 32 random bytes; Postgres holds only their hash, so every gateway replica
 * knows every session and a sign-out anywhere ends it everywhere. The CSRF token is an HMAC of the cookie value,
 * so it needs no storage, differs per session and cannot be made without the cookie and the server's key.
 */
export const SESSION_COOKIE = 'dash_session';
export const CSRF_HEADER = 'x-csrf-token';

export interface Session {
  userId: string;
  email: string;
  /** What the user may do (permissions.ts), read with the session on every request: a change applies at once. */
  role: Role;
  /** Whether the address is verified (an owner who signed up and has not followed the link is not). */
  verified: boolean;
  merchantId: string;
  merchantName: string;
  plan: string;
  expiresAt: Date;
  csrfToken: string;
}

export interface SessionStore {
  create(userId: string, merchantId: string): Promise<{ token: string; expiresAt: Date }>;
  resolve(token: string): Promise<Session | null>;
  end(token: string): Promise<void>;
  /** Ends every session of the user but the one of `keep` (none: all of them), in `sql` (a transaction's, say). */
  endAllOf(sql: Queryable, user: { merchantId: string; userId: string }, keep?: string): Promise<void>;
  csrfFor(token: string): string;
  checkCsrf(token: string, presented: string | undefined): boolean;
}

/**
 * The session of a request to /api/v1 made by the dashboard (a cookie, no bearer key), or the refusal to send:
 * 401 without a live session, 403 when a request that changes something lacks the CSRF token, or comes from an
 * owner who signed up and has not verified the address yet (the dashboard's routes-signup.ts; `unverifiedMay` lets
 * sign-out through). The dashboard's router makes it; /api/v1 is given it.
 */
export type SessionCheck = (
  req: Request,
  unverifiedMay?: boolean,
) => Promise<{ session: Session } | { refuse: 'UNAUTHORIZED' | 'FORBIDDEN'; message: string }>;

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export function createSessionStore(sql: Sql, masterKey: Buffer, ttlMinutes: number): SessionStore {
  const csrfKey = createHmacKey(masterKey, 'dashboard-csrf');
  const csrfFor = (token: string) => createHmac('sha256', csrfKey).update(token).digest('base64url');
  return {
    async create(userId, merchantId) {
      const token = newToken();
      const expiresAt = await insertSession(sql, { tokenHash: hashToken(token), userId, merchantId, ttlMinutes });
      // Expired sessions of anyone are removed as new ones are made: the table stays the size of the live ones.
      await deleteExpiredSessions(sql);
      return { token, expiresAt };
    },
    async resolve(token) {
      if (!TOKEN_SHAPE.test(token)) return null;
      const row = await liveSession(sql, hashToken(token));
      if (!row) return null;
      return {
        userId: row.user_id,
        email: row.email,
        role: row.role,
        verified: row.verified,
        merchantId: row.merchant_id,
        merchantName: row.name,
        plan: row.plan,
        expiresAt: row.expires_at,
        csrfToken: csrfFor(token),
      };
    },
    async end(token) {
      if (TOKEN_SHAPE.test(token)) await deleteSession(sql, hashToken(token));
    },
    async endAllOf(q, user, keep) {
      await deleteSessionsOf(q, user, keep ? hashToken(keep) : undefined);
    },
    csrfFor,
    checkCsrf(token, presented) {
      if (!presented) return false;
      const expected = Buffer.from(csrfFor(token));
      const given = Buffer.from(presented);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

/** The session cookie's value, if the request carries one. */
export function sessionToken(req: Request): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** HttpOnly (no script reads it), SameSite=Strict (no other site sends it), Secure unless in development. */
export function setSessionCookie(res: Response, token: string, expiresAt: Date, secure: boolean): void {
  res.cookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'strict', secure, path: '/', expires: expiresAt });
}

export function clearSessionCookie(res: Response, secure: boolean): void {
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', secure, path: '/' });
}
