import type { TObject, TSchema } from '@sinclair/typebox';
import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import type { NoInput } from '@platform/shared/schemas/common';
import {
  handlerOf,
  jsonSpec,
  type JsonInput,
  type JsonRoute,
  type JsonSpec,
  type JsonSpecFields,
} from '../../http/openapi/json-spec.ts';
import type { Permission } from '../../http/accounts/permissions.ts';
import type { Session, SessionStore } from '../../http/accounts/sessions.ts';

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

/**
 * A route's spec (http/openapi/json-spec.ts) and what the session's role must allow (http/accounts/permissions.ts).
 */
export type DashboardSpec<
  P extends TObject = TObject,
  Q extends TObject = TObject,
  B extends TSchema | null = TSchema | null,
> = JsonSpec<P, Q, B> & {
  /** What the session's role must allow; null on routes open to any user or to none. */
  permission: Permission | null;
};

/** A spec with what it leaves out filled in (no parameters, no body, a signed-in session) and its permission. */
export const spec = <
  P extends TObject = typeof NoInput,
  Q extends TObject = typeof NoInput,
  B extends TSchema | null = null,
>(
  s: JsonSpecFields<P, Q, B> & {
    /** Required: every route says what it needs, or null for none. */
    permission: Permission | null;
  },
): DashboardSpec<P, Q, B> => ({ ...jsonSpec<P, Q, B>(s), permission: s.permission });

/** A spec and the function that answers it. */
export type DashboardRoute = JsonRoute<DashboardContext, DashboardSpec>;

export const handle: <S extends DashboardSpec>(
  s: S,
  handler: (ctx: DashboardContext, input: JsonInput<S>) => unknown,
) => DashboardRoute = handlerOf<DashboardContext>();
