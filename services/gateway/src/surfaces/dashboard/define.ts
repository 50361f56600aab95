import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { NoInput } from '@platform/shared/schemas/common';
import type { Permission } from './permissions.ts';
import type { Session, SessionStore } from './sessions.ts';

/**
 * The dashboard's own API under /dashboard/api (what the public API has no operation for: sign-in, API keys,
 * programme settings, the overview's figures) in two halves: a spec per route (specs.ts: method, path, auth,
 * schemas), from which the router validates and /dashboard/api/openapi is generated, and a handler per spec
 * (routes-*.ts), so that the dashboard's typed client cannot drift from either.
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
  /** Signs the cursors of the dashboard's own paged lists (shared/src/cursor.ts). */
  cursorKey: Buffer;
  /** The dashboard's own origin as the browser reached it (where links back to a page point). */
  origin: string;
  secureCookies: boolean;
  setCookie: (token: string, expiresAt: Date) => void;
  clearCookie: () => void;
  setHeader: (name: string, value: string) => void;
}

export interface DashboardSpec<
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
  /** What the session's role must allow (permissions.ts); null on routes open to any user or to none. */
  permission: Permission | null;
  params: P;
  query: Q;
  body: B;
  success: { status: 200 | 201 | 204; schema: TSchema; description: string };
}

export type DashboardInput<S extends DashboardSpec> =
  S extends DashboardSpec<infer P, infer Q, infer B>
    ? { params: Static<P>; query: Static<Q>; body: B extends TSchema ? Static<B> : undefined }
    : never;

/** A spec with what it leaves out filled in: no parameters, no body, a signed-in session. */
export const spec = <
  P extends TObject = typeof NoInput,
  Q extends TObject = typeof NoInput,
  B extends TSchema | null = null,
>(
  s: Omit<DashboardSpec<P, Q, B>, 'params' | 'query' | 'body' | 'auth' | 'permission'> & {
    /** Required: every route says what it needs, or null for none. */
    permission: Permission | null;
    params?: P;
    query?: Q;
    body?: B;
    auth?: DashboardSpec['auth'];
  },
): DashboardSpec<P, Q, B> => ({
  ...s,
  auth: s.auth ?? 'session',
  params: s.params ?? (NoInput as unknown as P),
  query: s.query ?? (NoInput as unknown as Q),
  body: s.body ?? (null as B),
});

/** A spec and the function that answers it. */
export interface DashboardRoute {
  spec: DashboardSpec;
  /** Called with the input its spec's schemas accepted. */
  handler: (ctx: DashboardContext, input: { params: unknown; query: unknown; body: unknown }) => unknown;
}

export const handle = <S extends DashboardSpec>(
  s: S,
  handler: (ctx: DashboardContext, input: DashboardInput<S>) => unknown,
): DashboardRoute => ({ spec: s, handler: handler as unknown as DashboardRoute['handler'] });
