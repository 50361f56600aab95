import type { NatsConnection } from '@nats-io/transport-node';
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import { Counter, Histogram, type Registry } from 'prom-client';
import { operations, type ApiOperation } from '@platform/shared/api';
import { ApiError, type ErrorDetail } from '@platform/shared/errors';
import { compileValidator } from '@platform/shared/validation';
import { isDatabaseUnavailable, withinDeadline, type Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import type { Logger } from '@platform/shared/log';
import { decryptionKeys } from '@platform/shared/config';
import type { GatewayConfig } from './config.ts';
import { checkJsonBody, drainBody, verifyUtf8 } from './body-guard.ts';
import { forward } from './forward.ts';
import type { Requester } from './requester.ts';
import { sendError, sendServiceError } from './http-errors.ts';
import { createKeyResolver, type KeyRecord } from './keys.ts';
import { createIdempotency } from './idempotency/middleware.ts';
import { claimOf, claimRequester } from './idempotency/kept-reply.ts';
import { apiRefusals, stripeRefusals } from './idempotency/refusals.ts';
import { sessionToken } from './dashboard/sessions.ts';
import { buildOpenApi } from './openapi.ts';
import { createRateLimiter, RATE_LIMIT_BATCH_INTERVAL_MS } from './rate-limit.ts';
import { createTrackingRoutes } from './tracking-routes.ts';
import { createOnboardingPage } from './onboarding/page.ts';
import { dashboardAssets, findDashboardDir } from './dashboard/assets.ts';
import { buildDashboardOpenApi } from './dashboard/openapi.ts';
import { createDashboardApi } from './dashboard/router.ts';
import { requestContext, traceRequest } from './request-span.ts';
import { inDatabaseSpan } from '@platform/shared/tracing/db';
import type { PlatformKeyRecord } from './v1/platform-keys.ts';
import { createV1 } from './v1/router.ts';
import { trustProxySetting } from './trust-proxy.ts';

const API_PLANS = new Set(['growth', 'scale', 'enterprise']);
const BODY_LIMIT = '1mb';
const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const JSON_TYPES = ['application/json', 'application/*+json'];

export interface GatewayDeps {
  config: GatewayConfig;
  /** Commits without waiting for the WAL flush: rate-limit counters, usage tallies, idempotency claims. */
  sql: Sql;
  /** Commits durably: what must survive a Postgres crash once answered (the dashboard's writes). */
  durableSql: Sql;
  nc: NatsConnection;
  log: Logger;
  registry: Registry;
  ready: () => boolean;
  recordUsage: (keyId: string) => void;
  requester: Requester;
}

/**
 * The public edge: request ids, then for /api/v1 the checks in the product's order — key (401), plan (402),
 * rate (429), scope (403), body (400/413/415) — and finally the operation, forwarded to its service over NATS.
 */
export function createApp(deps: GatewayDeps): express.Express {
  const { config, sql, nc, log } = deps;
  // While NATS reconnects (a server restarted) the connection has no server info: the last server's limit still
  // applies, and the request then waits for the reconnection or answers UNAVAILABLE after RPC_TIMEOUT_MS (not 500).
  let lastMaxPayload = nc.info?.max_payload ?? 1024 * 1024;
  const maxPayload = () => (lastMaxPayload = nc.info?.max_payload ?? lastMaxPayload);
  const resolveKey = createKeyResolver(sql, config.KEY_CACHE_MS);
  const rateLimiter = createRateLimiter(sql, RATE_LIMIT_BATCH_INTERVAL_MS);
  const openapi = JSON.stringify(buildOpenApi(config.PUBLIC_BASE_URL));
  // A first request answers within RPC_TIMEOUT_MS, and its answer is stored within as long again: a claim unanswered
  // past both (and a second of slack) was abandoned.
  const idempotency = createIdempotency({
    sql,
    log,
    waitMs: config.RPC_TIMEOUT_MS,
    leaseMs: 2 * config.RPC_TIMEOUT_MS + 1000,
    registry: deps.registry,
    keys: decryptionKeys(config),
  });
  const apiIdempotency = idempotency({
    refusals: apiRefusals,
    owner: (res) => (res.locals['key'] as KeyRecord | undefined)?.keyId,
  });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['route', 'method', 'status'],
    registers: [deps.registry],
  });
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames: ['route', 'method', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [deps.registry],
  });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', trustProxySetting(config.TRUST_PROXY));
  app.use(helmet());

  // A listener made once, not per request (shared/src/unnest.ts says why); `this` is the response.
  function recordFinished(this: Response) {
    const labels = {
      route: (this.locals['route'] as string) ?? 'unmatched',
      method: this.req.method,
      status: String(this.statusCode),
    };
    requests.inc(labels);
    latency.observe(labels, (performance.now() - (this.locals['started'] as number)) / 1000);
  }
  app.use((req, res, next) => {
    const incoming = req.get('x-request-id');
    const requestId = incoming && INCOMING_REQUEST_ID.test(incoming) ? incoming : newId('req');
    res.locals['requestId'] = requestId;
    res.setHeader('X-Request-Id', requestId);
    res.locals['started'] = performance.now();
    res.on('finish', recordFinished);
    traceRequest(req, res, requestId, next);
  });

  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.get(
    '/readyz',
    (_req, res) => void res.status(deps.ready() ? 200 : 503).json({ status: deps.ready() ? 'ready' : 'not ready' }),
  );
  app.get('/api/v1/openapi', (_req, res) => {
    res.locals['route'] = 'getOpenApi';
    res.type('application/json').send(openapi);
  });

  app.use(createTrackingRoutes({ config, nc, consumeRate: rateLimiter.consume }));
  // The affiliates' onboarding page: its single-use link is its only credential.
  app.use(createOnboardingPage({ config, requester: deps.requester, maxPayload }));

  // The merchant dashboard: its pages, its own API (sign-in, keys, settings) and its OpenAPI document.
  // Its writes (sessions, sign-in failures, keys, settings, users) are security-relevant: on the durable pool.
  const dashboard = createDashboardApi({
    sql: deps.durableSql,
    log,
    config,
    requester: deps.requester,
    registry: deps.registry,
  });
  const dashboardOpenapi = JSON.stringify(buildDashboardOpenApi(dashboard.routes));
  app.get('/dashboard/api/openapi', (_req, res) => {
    res.locals['route'] = 'dashboard.openapi';
    res.type('application/json').send(dashboardOpenapi);
  });
  app.use(dashboard.router);
  app.use(dashboardAssets(findDashboardDir()));

  // The platform payment API: platform keys, Stripe's conventions, the payments service (v1/router.ts).
  const v1 = createV1({
    config,
    sql,
    log,
    requester: deps.requester,
    maxPayload,
    consumeRate: rateLimiter.consume,
    // Keys are the platform key's own; acting for another Stripe-Account is another request.
    beforePost: idempotency({
      refusals: stripeRefusals,
      owner: (res) => (res.locals['platformKey'] as PlatformKeyRecord | undefined)?.keyId,
      context: (req) => req.get('stripe-account') ?? '',
    }),
  });
  app.use('/v1', v1.authenticate);
  app.use(v1.routes);

  app.use('/api/v1', async (req, res, next) => {
    try {
      // The dashboard's calls carry its session cookie instead of a key: they act for the session's merchant, on
      // every plan, with every scope, outside the per-key rate limit, and need the CSRF token.
      if (!req.get('authorization') && sessionToken(req)) {
        const auth = await dashboard.authenticate(req);
        if ('refuse' in auth) return sendError(res, auth.refuse, auth.message);
        res.locals['key'] = {
          keyId: auth.session.userId,
          merchantId: auth.session.merchantId,
          scopes: ['*'],
          rateLimitPerMin: 0,
          plan: auth.session.plan,
          revoked: false,
        };
        res.setHeader('Cache-Control', 'no-store');
        return next();
      }
      // The key and the rate are read from Postgres: within the same bound as the service's answer, so that an API
      // call answers 503 UNAVAILABLE in time while the database is unreachable, never waits on it unbounded.
      // The service gets what is left of the bound (run below).
      const deadline = Date.now() + config.RPC_TIMEOUT_MS;
      res.locals['deadline'] = deadline;
      const key = await withinDeadline(authenticate(req), config.RPC_TIMEOUT_MS);
      if (!key) return sendError(res, 'UNAUTHORIZED', 'A valid API key is required: Authorization: Bearer svc_…');
      res.locals['key'] = key;
      deps.recordUsage(key.keyId);
      // The plan is checked before the rate, so a refused plan takes no slot of the window; its
      // answer still shows the window, as every API response does.
      const planAllowed = API_PLANS.has(key.plan);
      const rate = await withinDeadline(
        inDatabaseSpan('upsert api_rate_windows', () =>
          planAllowed
            ? rateLimiter.consume(key.keyId, key.rateLimitPerMin)
            : rateLimiter.peek(key.keyId, key.rateLimitPerMin),
        ),
        Math.max(1, deadline - Date.now()),
      );
      res.setHeader('RateLimit-Limit', String(rate.limit));
      res.setHeader('RateLimit-Remaining', String(rate.remaining));
      res.setHeader('RateLimit-Reset', String(rate.resetSeconds));
      if (!planAllowed) return sendError(res, 'PLAN_REQUIRED', 'API access requires the Growth plan or higher');
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
  });

  async function authenticate(req: Request): Promise<KeyRecord | null> {
    const header = req.get('authorization');
    const match = header ? /^Bearer +(\S+) *$/i.exec(header) : null;
    if (!match) return null;
    const key = await resolveKey(match[1]!);
    return key && !key.revoked ? key : null;
  }

  // strict: false parses any JSON value, so that `null`, `42` or `"x"` are refused as what they are (not an object),
  // not as invalid JSON.
  const jsonParser = express.json({ limit: BODY_LIMIT, strict: false, type: JSON_TYPES, verify: verifyUtf8 });
  for (const op of operations) {
    app[op.method](toExpressPath(op.path), operationHandlers(op));
  }

  const isJsonObject = (body: unknown) => typeof body === 'object' && body !== null && !Array.isArray(body);

  function operationHandlers(op: ApiOperation) {
    const checkScope = (_req: Request, res: Response, next: NextFunction) => {
      res.locals['route'] = op.operationId;
      const key = res.locals['key'] as KeyRecord;
      if (!key.scopes.includes('*') && !key.scopes.includes(op.scope)) {
        return sendError(res, 'FORBIDDEN', `This key lacks the ${op.scope} scope`);
      }
      next();
    };
    const parseBody = (req: Request, res: Response, next: NextFunction) => {
      if (!op.body) return next();
      const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
      if (!hasBody) {
        req.body = {};
        return next();
      }
      if (!req.is(JSON_TYPES)) {
        // Read the body first: closing on a client that is still sending resets the connection and loses the 415.
        return drainBody(req, () =>
          sendError(res, 'INVALID_INPUT', 'The body must be JSON (Content-Type: application/json)', { status: 415 }),
        );
      }
      jsonParser(req, res, (err?: unknown) => {
        if (err) return next(err);
        const problem = isJsonObject(req.body)
          ? checkJsonBody(req.body)
          : { path: 'body', message: 'must be a JSON object' };
        if (problem) return sendError(res, 'INVALID_INPUT', 'The request is invalid', { details: [problem] });
        next();
      });
    };
    const run = async (req: Request, res: Response) => {
      const key = res.locals['key'] as KeyRecord;
      const deadline = (res.locals['deadline'] as number | undefined) ?? Date.now() + config.RPC_TIMEOUT_MS;
      const claim = claimOf(res);
      const result = await forward(
        claimRequester(res, deps.requester),
        maxPayload(),
        config.NATS_PREFIX,
        op,
        {
          request_id: res.locals['requestId'] as string,
          merchant_id: key.merchantId,
          key_id: key.keyId,
          deadline,
          params: req.params as Record<string, string>,
          query: req.query,
          body: op.body ? (req.body ?? {}) : undefined,
          ...(claim ? { idempotency: claim } : {}),
        },
        Math.max(1, deadline - Date.now()),
        requestContext(res),
      );
      switch (result.kind) {
        case 'ok':
          // A view of the reply's bytes, not a copy of them.
          res
            .status(result.status)
            .type(result.contentType)
            .send(Buffer.from(result.body.buffer, result.body.byteOffset, result.body.byteLength));
          return;
        case 'no_content':
          res.status(204).end();
          return;
        case 'error':
          return sendServiceError(res, result.error);
        case 'too_large':
          return sendError(res, 'INVALID_INPUT', 'The request is invalid', { details: oversizeDetails(req.body) });
        case 'unavailable':
          return sendError(res, 'UNAVAILABLE', 'The service did not answer in time; try again');
      }
    };
    /**
     * The body is within the 1 MiB limit, so the answer is not 413, but the request with it does not fit in a NATS
     * message (max_payload, 1 MiB by default) and cannot reach the service. No operation accepts a body of that size
     * (every field is bounded), so the answer is the service's own: 400 with what its schema finds wrong, or, where
     * only the service's further checks would refuse it, with the body itself named.
     */
    let validateBody: ((value: unknown) => unknown) | undefined;
    const oversizeDetails = (body: unknown): ErrorDetail[] => {
      if (op.body) {
        validateBody ??= compileValidator(op.body, 'body');
        try {
          validateBody(body);
        } catch (err) {
          if (err instanceof ApiError && err.details?.length) return err.details;
        }
      }
      return [{ path: 'body', message: 'is larger than this operation accepts' }];
    };
    return op.method === 'post' ? [checkScope, parseBody, apiIdempotency, run] : [checkScope, parseBody, run];
  }

  app.use((_req: Request, res: Response) => sendError(res, 'NOT_FOUND', 'No such route'));

  app.use((err: Error & { type?: string; status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return;
    switch (err.type) {
      case 'entity.parse.failed':
        return sendError(res, 'INVALID_INPUT', 'The body is not valid JSON', {
          details: [{ path: 'body', message: 'is not valid JSON' }],
        });
      case 'entity.too.large':
        res.setHeader('Connection', 'close');
        return sendError(res, 'INVALID_INPUT', 'The body exceeds 1 MiB', { status: 413 });
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return sendError(res, 'INVALID_INPUT', 'The body must be UTF-8 JSON', { status: 415 });
      case 'body.not.utf8':
        return sendError(res, 'INVALID_INPUT', 'The body must be UTF-8 JSON', {
          details: [{ path: 'body', message: 'is not valid UTF-8' }],
        });
      case 'request.aborted':
      case 'request.size.invalid':
        return sendError(res, 'INVALID_INPUT', 'The body was not received completely');
    }
    // A path segment that does not percent-decode cannot name anything: like any malformed id, NOT_FOUND.
    if (err instanceof URIError) return sendError(res, 'NOT_FOUND', 'No such resource');
    if (err.status && err.status >= 400 && err.status < 500)
      return sendError(res, 'INVALID_INPUT', 'The request is invalid');
    log.error('unhandled gateway error', { err, request_id: res.locals['requestId'] });
    sendError(res, 'INTERNAL', 'Something went wrong on our side');
  });

  return app;
}

const toExpressPath = (path: string) => path.replace(/\{([a-z_]+)\}/g, ':$1');
