import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { NoInput } from '@platform/shared/schemas/common';
import type { Session, SessionStore } from './sessions.ts';

/**
 * One entry per route of the dashboard's own API under /dashboard/api (what the public API has no operation for:
 * sign-in, API keys, programme settings, the overview's figures). Like the public catalogue, the router validates
 * with the entry's schemas and /dashboard/api/openapi is generated from them, so the dashboard's typed client
 * cannot drift from either.
 */
export interface DashboardContext {
  sql: Sql;
  log: Logger;
  sessions: SessionStore;
  /** The caller's session; on routes with `auth: 'none'` or `'optional'` it may be null (typed as present for the rest). */
  session: Session;
  /** The session cookie's value (a route that signs out ends it). */
  token: string;
  ip: string;
  /** The request's X-Request-Id. */
  requestId: string;
  /** The dashboard's own origin as the browser reached it (where links back to a page point). */
  origin: string;
  secureCookies: boolean;
  setCookie: (token: string, expiresAt: Date) => void;
  clearCookie: () => void;
  setHeader: (name: string, value: string) => void;
}

export interface DashboardRoute<
  P extends TObject = TObject,
  Q extends TObject = TObject,
  B extends TSchema | null = TSchema | null,
> {
  operationId: string;
  method: 'get' | 'post' | 'patch' | 'delete';
  /** OpenAPI path template, under /dashboard/api. */
  path: string;
  summary: string;
  /**
   * 'session': a signed-in user (and, unless GET, the CSRF header); 'optional': the session if there is one (the
   * app's first look, which must not fail before sign-in); 'none': sign-in itself.
   */
  auth: 'session' | 'optional' | 'none';
  params: P;
  query: Q;
  body: B;
  success: { status: 200 | 201 | 204; schema: TSchema; description: string };
  handler: (
    ctx: DashboardContext,
    input: { params: Static<P>; query: Static<Q>; body: B extends TSchema ? Static<B> : undefined },
  ) => unknown;
}

export const route = <
  P extends TObject = typeof NoInput,
  Q extends TObject = typeof NoInput,
  B extends TSchema | null = null,
>(
  r: Omit<DashboardRoute<P, Q, B>, 'params' | 'query' | 'body' | 'auth'> & {
    params?: P;
    query?: Q;
    body?: B;
    auth?: 'session' | 'optional' | 'none';
  },
): DashboardRoute =>
  ({
    ...r,
    auth: r.auth ?? 'session',
    params: r.params ?? NoInput,
    query: r.query ?? NoInput,
    body: r.body ?? null,
  }) as unknown as DashboardRoute;
