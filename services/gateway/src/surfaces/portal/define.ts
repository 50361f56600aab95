import type { Response } from 'express';
import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import type { GatewayConfig } from '../../config.ts';
import { handlerOf, type JsonInput, type JsonRoute, type JsonSpec } from '../../http/openapi/json-spec.ts';
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

/** A spec of specs.ts and the function that answers it. */
export type PortalRoute = JsonRoute<PortalContext>;

/** `handle(portalSpecs.x, async (ctx, { query, body }) => …)`: the handler of a spec, given its validated input. */
export const handle: <S extends JsonSpec>(
  s: S,
  handler: (ctx: PortalContext, input: JsonInput<S>) => unknown,
) => PortalRoute = handlerOf<PortalContext>();
