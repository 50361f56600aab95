import express, { type NextFunction, type Request, type Response } from 'express';
import type { Registry } from 'prom-client';
import { encryptionKey } from '@platform/shared/config';
import { createHmacKey } from '@platform/shared/crypto';
import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { compileValidator } from '@platform/shared/validation';
import type { GatewayConfig } from '../../config.ts';
import { sendError, sendRouteFailure } from '../../http/http-errors.ts';
import type { Requester } from '../../http/requester.ts';
import { dashboardDocument, serveDocument } from '../../http/openapi/documents.ts';
import { toExpressPath } from '../../http/openapi/express-path.ts';
import { routesOf } from '../../http/openapi/json-spec.ts';
import type { DashboardContext, DashboardRoute, DashboardSpec } from './define.ts';
import { createPasswordChecker, type PasswordChecker } from './password-check.ts';
import { createPaymentsCaller, type PaymentsCaller } from './payments.ts';
import { can, refusal } from '../../http/accounts/permissions.ts';
import { balanceRoutes } from './routes-balance.ts';
import { billingRoutes } from './routes-billing.ts';
import { keyRoutes } from './routes-keys.ts';
import { overviewRoutes } from './routes-overview.ts';
import { programmePageRoutes, programmeRoutes } from './routes-programme.ts';
import { sessionRoutes } from './routes-session.ts';
import { signupRoutes } from './routes-signup.ts';
import { accountRoutes } from './routes-account.ts';
import { passwordResetRoutes } from './routes-password-reset.ts';
import { auditRoutes } from './routes-audit.ts';
import { teamRoutes } from './routes-team.ts';
import { invitationRoutes } from './routes-invitations.ts';
import { dashboardSpecs } from './specs.ts';
import { webhookRoutes } from './routes-webhooks.ts';
import {
  clearSessionCookie,
  createSessionStore,
  CSRF_HEADER,
  sessionToken,
  setSessionCookie,
  type Session,
  type SessionCheck,
  type SessionStore,
} from '../../http/accounts/sessions.ts';
import { createSigninLimiter } from '../../http/accounts/signin-limit.ts';
import { createSignupLimiter } from '../../http/accounts/signup-limit.ts';

export interface DashboardApi {
  router: express.Router;
  sessions: SessionStore;
  /** The session of a request to /api/v1 made by the dashboard, or the refusal to send (http/accounts/sessions.ts). */
  authenticate: SessionCheck;
}

/** The handler of every spec of specs.ts. */
function dashboardRoutes(
  sql: Sql,
  config: GatewayConfig,
  payments: PaymentsCaller,
  passwords: PasswordChecker,
): DashboardRoute[] {
  const limiter = createSigninLimiter(sql, SIGNIN_LIMITS);
  const routes = [
    ...sessionRoutes(limiter, passwords),
    ...accountRoutes(limiter, passwords),
    ...passwordResetRoutes(passwords, config),
    ...signupRoutes(createSignupLimiter(sql), passwords, config),
    ...overviewRoutes,
    ...keyRoutes,
    ...webhookRoutes(limiter, passwords, config),
    ...programmeRoutes,
    ...programmePageRoutes(config),
    ...teamRoutes(passwords),
    ...invitationRoutes(passwords, config),
    ...auditRoutes,
    ...balanceRoutes(payments, config.APP_ENV === 'production'),
    ...billingRoutes(payments, config),
  ];
  // Served in the specs' order (the order of the document), each spec by exactly one handler.
  return routesOf<DashboardContext, DashboardSpec>('dashboard', Object.values(dashboardSpecs), routes);
}

export function createDashboardApi(deps: {
  sql: Sql;
  log: Logger;
  config: GatewayConfig;
  requester: Requester;
  registry?: Registry;
}): DashboardApi {
  const { sql, log, config } = deps;
  const sessions = createSessionStore(sql, encryptionKey(config), SESSION_MINUTES);
  const cursorKey = createHmacKey(encryptionKey(config), 'dashboard-cursor');
  // Secure outside development: the cookie then travels over HTTPS only (browsers also accept it from loopback http).
  const secure = config.APP_ENV !== 'development';
  const payments = createPaymentsCaller(deps.requester, config.NATS_PREFIX, config.RPC_TIMEOUT_MS);
  const routes = dashboardRoutes(
    sql,
    config,
    payments,
    createPasswordChecker(config.PASSWORD_HASH_COST, deps.registry),
  );
  const router = express.Router();
  router.use(serveDocument('/dashboard/api/openapi', 'dashboard.openapi', dashboardDocument()));
  const jsonParser = express.json({ limit: '64kb', strict: true, type: ['application/json'] });

  const authenticate: DashboardApi['authenticate'] = async (req, unverifiedMay = false) => {
    const token = sessionToken(req);
    const session = token ? await sessions.resolve(token) : null;
    if (!token || !session) return { refuse: 'UNAUTHORIZED', message: 'Sign in to the dashboard first' };
    if (!SAFE_METHODS.has(req.method) && !sessions.checkCsrf(token, req.get(CSRF_HEADER))) {
      return {
        refuse: 'FORBIDDEN',
        message: 'A dashboard request that changes something needs the X-CSRF-Token header of its session',
      };
    }
    // Read with the session on every request: following the link applies at once to every session.
    if (!SAFE_METHODS.has(req.method) && !unverifiedMay && !session.verified)
      return { refuse: 'FORBIDDEN', message: UNVERIFIED };
    return { session };
  };

  for (const { spec: r, handler } of routes) {
    const validateParams = compileValidator<Record<string, string>>(r.params, 'params');
    const validateQuery = compileValidator<Record<string, unknown>>(r.query, 'query');
    const validateBody = r.body ? compileValidator<unknown>(r.body, 'body') : null;
    const handle = async (req: Request, res: Response) => {
      res.locals['route'] = `dashboard.${r.operationId}`;
      res.setHeader('Cache-Control', 'no-store');
      try {
        let session = null as unknown as Session;
        const token = sessionToken(req) ?? '';
        if (r.auth === 'session') {
          const auth = await authenticate(req, r.operationId === 'signOut');
          if ('refuse' in auth) return sendError(res, auth.refuse, auth.message);
          session = auth.session;
          // Before the input is read: a role without the permission learns nothing from validation either.
          if (r.permission && !can(session.role, r.permission))
            return sendError(res, 'FORBIDDEN', refusal(session.role, r.permission));
        } else if (r.auth === 'optional' && token) {
          session = (await sessions.resolve(token)) as Session;
        }
        const params = validateParams({ ...req.params });
        const query = validateQuery({ ...(req.query as Record<string, unknown>) });
        const body = validateBody ? validateBody(req.body ?? {}) : undefined;
        const ctx: DashboardContext = {
          sql,
          log,
          sessions,
          session,
          token,
          ip: req.ip ?? 'unknown',
          requestId: res.locals['requestId'] as string,
          cursorKey,
          origin: `${req.protocol}://${req.get('host') ?? 'localhost'}`,
          secureCookies: secure,
          setCookie: (value, expiresAt) => setSessionCookie(res, value, expiresAt, secure),
          clearCookie: () => clearSessionCookie(res, secure),
          setHeader: (name, value) => res.setHeader(name, value),
        };
        const result = await handler(ctx, { params, query, body });
        if (r.success.status === 204) return void res.status(204).end();
        res.status(r.success.status).json(result);
      } catch (err) {
        sendRouteFailure(res, log, 'dashboard', r.operationId, err);
      }
    };
    const parse = (req: Request, res: Response, next: NextFunction) => {
      if (!r.body) return next();
      if (Number(req.headers['content-length'] ?? 0) > 0 && !req.is('application/json')) {
        return sendError(res, 'INVALID_INPUT', 'The body must be JSON (Content-Type: application/json)', {
          status: 415,
        });
      }
      jsonParser(req, res, next);
    };
    router[r.method](toExpressPath(r.path), parse, handle);
  }
  // A method a route does not have is an unknown route, as on /api/v1: without this, Express answers an OPTIONS
  // itself with 200 and an Allow header listing the route's methods.
  router.options('/dashboard/api/*path', (_req: Request, res: Response) =>
    sendError(res, 'NOT_FOUND', 'No such route'),
  );
  return { router, sessions, authenticate };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const UNVERIFIED =
  'Verify your e-mail address first: open the link we mailed you when you signed up (signing up again sends a new one)';

/**
 * Fixed rather than configurable: a working day's session, and password attempts per 15 minutes
 * (http/accounts/signin-limit.ts): per account from one client IP (enough for typos, too few for guessing), per
 * account from anywhere (a guesser using many addresses, bounded without locking the owner out at the first few),
 * and per client IP (an office behind one address signs in many users).
 */
export const SESSION_MINUTES = 480;
export const SIGNIN_LIMITS = { perAccountAndIp: 5, perAccount: 20, perIp: 50 };
