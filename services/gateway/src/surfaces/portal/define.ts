import type { Response } from 'express';
import type { TObject } from '@sinclair/typebox';
import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import type { GatewayConfig } from '../../config.ts';
import type { PortalCaller } from './calls.ts';
import type { PortalLinkLimiter } from './limits.ts';
import type { PortalSession, PortalSessionStore } from './sessions.ts';

/** What a portal API handler is given: the session (on every route but sign-in) and the means to answer. */
export interface PortalContext {
  sql: Sql;
  log: Logger;
  config: GatewayConfig;
  /** ENCRYPTION_KEY: mails are stored encrypted under it. */
  masterKey: Buffer;
  sessions: PortalSessionStore;
  limiter: PortalLinkLimiter;
  call: PortalCaller;
  /** The caller's session; null only on routes with `auth: 'none'`. */
  session: PortalSession;
  token: string;
  ip: string;
  requestId: string;
  secureCookies: boolean;
  res: Response;
}

/** One route of /portal/api: its schemas apart from its handler, as the dashboard's routes are. */
export interface PortalRoute {
  method: 'get' | 'post' | 'put';
  path: string;
  /** 'session': a live portal session (and the CSRF header unless GET); 'none': sign-in itself. */
  auth: 'session' | 'none';
  query?: TObject;
  body?: TObject;
  /** A JSON object body passed on as it is, for the service whose operation validates it. */
  rawBody?: boolean;
  status: 200 | 201 | 202 | 204;
  handler: (ctx: PortalContext, input: { query: never; body: never }) => Promise<unknown>;
}

export const route = <Q = Record<string, never>, B = undefined>(r: {
  method: PortalRoute['method'];
  path: string;
  auth?: PortalRoute['auth'];
  query?: TObject;
  body?: TObject;
  rawBody?: boolean;
  status?: PortalRoute['status'];
  handler: (ctx: PortalContext, input: { query: Q; body: B }) => Promise<unknown>;
}): PortalRoute => ({
  ...r,
  auth: r.auth ?? 'session',
  status: r.status ?? 200,
  handler: r.handler,
});
