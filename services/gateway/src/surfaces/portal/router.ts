import express, { type NextFunction, type Request, type Response } from 'express';
import { encryptionKey } from '@platform/shared/config';
import type { Sql } from '@platform/shared/db';
import { ApiError } from '@platform/shared/errors';
import type { Logger } from '@platform/shared/log';
import { compileValidator } from '@platform/shared/validation';
import type { GatewayConfig } from '../../config.ts';
import { findDashboardDir } from '../../http/dashboard-assets.ts';
import { sendError, sendRouteFailure } from '../../http/http-errors.ts';
import { portalDocument, serveDocument } from '../../http/openapi/documents.ts';
import { toExpressPath } from '../../http/openapi/express-path.ts';
import { routesOf, type JsonSpec } from '../../http/openapi/json-spec.ts';
import type { Requester } from '../../http/requester.ts';
import { createPortalCaller } from './calls.ts';
import type { PortalContext } from './define.ts';
import { createPortalLinkLimiter } from './limits.ts';
import { portalPages } from './pages.ts';
import { dataRoutes } from './routes-data.ts';
import { payoutSettingsRoutes } from './routes-payout-settings.ts';
import { sessionRoutes } from './routes-session.ts';
import { createPortalSessionStore, PORTAL_CSRF_HEADER, portalToken, type PortalSession } from './sessions.ts';
import { portalSpecs } from './specs.ts';

/**
 * The affiliate portal (docs/PORTAL.md): its pages and link redemption (pages.ts) and its JSON API under
 * /portal/api, every answer the signed-in affiliate's own. Its session is its own (sessions.ts), never the
 * dashboard's; its writes (sessions, links, limits, mails) go to the gateway's durable pool.
 */
export function createPortal(deps: {
  config: GatewayConfig;
  sql: Sql;
  log: Logger;
  requester: Requester;
  maxPayload: () => number;
}): express.Router {
  const { config, sql, log } = deps;
  const masterKey = encryptionKey(config);
  const sessions = createPortalSessionStore(sql, masterKey);
  const limiter = createPortalLinkLimiter(sql);
  const call = createPortalCaller(deps);
  // Secure outside development (an embedded session's cookie always is: SameSite=None requires it).
  const secureCookies = config.APP_ENV !== 'development';
  const router = express.Router();
  router.use(portalPages({ sql, log, sessions, dir: findDashboardDir(), secureCookies }));

  const jsonParser = express.json({ limit: '64kb', strict: true, type: ['application/json'] });
  const routes = routesOf<PortalContext, JsonSpec>('portal', Object.values(portalSpecs), [
    ...sessionRoutes,
    ...dataRoutes,
    ...payoutSettingsRoutes,
  ]);
  router.use(serveDocument('/portal/api/openapi', 'portal.openapi', portalDocument()));
  for (const { spec: r, handler } of routes) {
    const validateParams = compileValidator<Record<string, string>>(r.params, 'params');
    const validateQuery = compileValidator<Record<string, unknown>>(r.query, 'query');
    const validateBody = r.body && !r.bodyCheckedBy ? compileValidator<unknown>(r.body, 'body') : null;
    const parse = (req: Request, res: Response, next: NextFunction) => {
      if (r.method === 'get') return next();
      if (Number(req.headers['content-length'] ?? 0) > 0 && !req.is('application/json'))
        return sendError(res, 'INVALID_INPUT', 'The body must be JSON (Content-Type: application/json)', {
          status: 415,
        });
      jsonParser(req, res, next);
    };
    const handle = async (req: Request, res: Response) => {
      res.locals['route'] = `portal.${r.operationId}`;
      res.setHeader('Cache-Control', 'no-store');
      try {
        const token = portalToken(req) ?? '';
        let session = null as unknown as PortalSession;
        if (r.auth === 'session') {
          const found = token ? await sessions.resolve(token) : null;
          if (!found) return sendError(res, 'UNAUTHORIZED', 'Sign in to the affiliate portal first');
          if (r.method !== 'get' && !sessions.checkCsrf(token, req.get(PORTAL_CSRF_HEADER)))
            return sendError(
              res,
              'FORBIDDEN',
              `A portal request that changes something needs the ${PORTAL_CSRF_HEADER} header of its session`,
            );
          session = found;
        }
        const params = validateParams({ ...req.params });
        const query = validateQuery({ ...(req.query as Record<string, unknown>) });
        let body: unknown = undefined;
        if (validateBody) body = validateBody(req.body ?? {});
        else if (r.bodyCheckedBy) {
          body = req.body;
          if (typeof body !== 'object' || body === null || Array.isArray(body))
            throw new ApiError('INVALID_INPUT', 'The request is invalid', [
              { path: 'body', message: 'must be a JSON object' },
            ]);
        }
        const ctx: PortalContext = {
          sql,
          log,
          config,
          masterKey,
          sessions,
          limiter,
          call,
          session,
          token,
          ip: req.ip ?? 'unknown',
          requestId: res.locals['requestId'] as string,
          secureCookies,
          res,
        };
        const result = await handler(ctx, { params, query, body });
        if (r.success.status === 204) return void res.status(204).end();
        res.status(r.success.status).json(result);
      } catch (err) {
        sendRouteFailure(res, log, 'portal', r.operationId, err);
      }
    };
    router[r.method](toExpressPath(r.path), parse, handle);
  }
  // As on /dashboard/api: a method a route lacks is an unknown route, not Express's own 200 to OPTIONS.
  router.options('/portal/api/*path', (_req: Request, res: Response) => sendError(res, 'NOT_FOUND', 'No such route'));
  return router;
}
