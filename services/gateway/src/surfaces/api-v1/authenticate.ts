import type { Request, RequestHandler } from 'express';
import { isDatabaseUnavailable, withinDeadline, type Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { allowsApiKeys, lowestPlanAllowing } from '@platform/shared/plans';
import { inDatabaseSpan } from '@platform/shared/tracing/db';
import type { GatewayConfig } from '../../config.ts';
import { sessionToken, type SessionCheck } from '../../http/accounts/sessions.ts';
import { sendError } from '../../http/http-errors.ts';
import { createKeyResolver, type KeyRecord } from './keys.ts';
import type { RateDecision } from '../../http/rate-limit/limiter.ts';

/** The refusal of a plan without API access, naming the cheapest plan with it (the catalogue's). */
const PLAN_REFUSAL = `API access requires the ${lowestPlanAllowing('api_keys').name} plan or higher`;

export interface ApiV1AuthDeps {
  config: GatewayConfig;
  sql: Sql;
  log: Logger;
  rate: {
    consume(keyId: string, limit: number): Promise<RateDecision>;
    peek(keyId: string, limit: number): Promise<RateDecision>;
  };
  /** The dashboard's session check, for its calls to /api/v1 (a cookie instead of a key). */
  dashboard: { authenticate: SessionCheck };
  recordUsage: (keyId: string) => void;
}

/**
 * The checks of every /api/v1 operation before its own, in the product's order: key (401), plan (402), rate (429).
 * The scope (403) is the operation's (router.ts). The caller is left in res.locals['key'].
 */
export function createApiV1Authentication(deps: ApiV1AuthDeps): RequestHandler {
  const { config, log } = deps;
  const resolveKey = createKeyResolver(deps.sql, config.KEY_CACHE_MS);

  async function keyOf(req: Request): Promise<KeyRecord | null> {
    const header = req.get('authorization');
    const match = header ? /^Bearer +(\S+) *$/i.exec(header) : null;
    if (!match) return null;
    const key = await resolveKey(match[1]!);
    return key && !key.revoked ? key : null;
  }

  return async (req, res, next) => {
    try {
      // The dashboard's calls carry its session cookie instead of a key: they act for the session's merchant, on
      // every plan, outside the per-key rate limit, and need the CSRF token; the user's role, not a scope, decides
      // which operations (router.ts).
      if (!req.get('authorization') && sessionToken(req)) {
        const auth = await deps.dashboard.authenticate(req);
        if ('refuse' in auth) return sendError(res, auth.refuse, auth.message);
        res.locals['key'] = {
          keyId: auth.session.userId,
          merchantId: auth.session.merchantId,
          scopes: ['*'],
          rateLimitPerMin: 0,
          plan: auth.session.plan,
          revoked: false,
          role: auth.session.role,
        } satisfies KeyRecord;
        res.setHeader('Cache-Control', 'no-store');
        return next();
      }
      // The key and the rate are read from Postgres: within the same bound as the service's answer, so that an API
      // call answers 503 UNAVAILABLE in time while the database is unreachable, never waits on it unbounded.
      // The service gets what is left of the bound (router.ts).
      const deadline = Date.now() + config.RPC_TIMEOUT_MS;
      res.locals['deadline'] = deadline;
      const key = await withinDeadline(keyOf(req), config.RPC_TIMEOUT_MS);
      if (!key) return sendError(res, 'UNAUTHORIZED', 'A valid API key is required: Authorization: Bearer svc_…');
      res.locals['key'] = key;
      deps.recordUsage(key.keyId);
      // The plan is checked before the rate, so a refused plan takes no slot of the window; its
      // answer still shows the window, as every API response does.
      const planAllowed = allowsApiKeys(key.plan);
      const rate = await withinDeadline(
        inDatabaseSpan('upsert api_rate_windows', () =>
          planAllowed
            ? deps.rate.consume(key.keyId, key.rateLimitPerMin)
            : deps.rate.peek(key.keyId, key.rateLimitPerMin),
        ),
        Math.max(1, deadline - Date.now()),
      );
      res.setHeader('RateLimit-Limit', String(rate.limit));
      res.setHeader('RateLimit-Remaining', String(rate.remaining));
      res.setHeader('RateLimit-Reset', String(rate.resetSeconds));
      if (!planAllowed) return sendError(res, 'PLAN_REQUIRED', PLAN_REFUSAL);
      if (!rate.allowed) {
        res.setHeader('Retry-After', String(rate.resetSeconds));
        return sendError(res, 'RATE_LIMITED', `Rate limit of ${rate.limit} requests per minute exceeded`);
      }
      next();
    } catch (err) {
      if (isDatabaseUnavailable(err))
        log.warn('authentication failed: database unavailable', {
          err: err as Error,
          request_id: res.locals['requestId'],
        });
      else log.error('authentication failed', { err: err as Error, request_id: res.locals['requestId'] });
      sendError(res, 'UNAVAILABLE', 'The service is temporarily unavailable');
    }
  };
}
