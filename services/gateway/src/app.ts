import type { NatsConnection } from '@nats-io/transport-node';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import helmet from 'helmet';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import type { Logger } from '@platform/shared/log';
import { decryptionKeys } from '@platform/shared/config';
import { createApiV1 } from './surfaces/api-v1/router.ts';
import type { GatewayConfig } from './config.ts';
import type { Requester } from './http/requester.ts';
import { sendError } from './http/http-errors.ts';
import type { KeyRecord } from './surfaces/api-v1/keys.ts';
import { createIdempotency } from './http/idempotency/middleware.ts';
import { apiRefusals, stripeRefusals } from './http/idempotency/refusals.ts';
import { createRateLimiter, RATE_LIMIT_BATCH_INTERVAL_MS } from './http/rate-limit/limiter.ts';
import { createTrackingRoutes } from './surfaces/tracking/router.ts';
import { createOnboardingPage } from './surfaces/onboarding/router.ts';
import { createProgrammePage } from './surfaces/programme/router.ts';
import { dashboardAssets, findDashboardDir } from './http/dashboard-assets.ts';
import { createDashboardApi } from './surfaces/dashboard/router.ts';
import { createDevMailbox } from './surfaces/dev-mailbox/router.ts';
import { createPortal } from './surfaces/portal/router.ts';
import { traceRequest } from './http/request-span.ts';
import type { PlatformKeyRecord } from './surfaces/v1/platform-keys.ts';
import { createV1 } from './surfaces/v1/router.ts';
import { createReferenceRouter } from './surfaces/reference/router.ts';
import { trustProxySetting } from './http/trust-proxy.ts';

const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

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
 * The public edge: the shared middleware (request ids and metrics, helmet, the error envelope) around the gateway's
 * surfaces, each a router of its own with its route specs and OpenAPI document: referral tracking, the onboarding
 * pages, the dashboard (/dashboard/api and its pages), the platform payment API (/v1) and the merchant REST API
 * (/api/v1). The body guard against hostile requests sits in the server (service.ts, http/body-guard.ts).
 */
export function createApp(deps: GatewayDeps): express.Express {
  const { config, sql, nc, log } = deps;
  // While NATS reconnects (a server restarted) the connection has no server info: the last server's limit still
  // applies, and the request then waits for the reconnection or answers UNAVAILABLE after RPC_TIMEOUT_MS (not 500).
  let lastMaxPayload = nc.info?.max_payload ?? 1024 * 1024;
  const maxPayload = () => (lastMaxPayload = nc.info?.max_payload ?? lastMaxPayload);
  const rateLimiter = createRateLimiter(sql, RATE_LIMIT_BATCH_INTERVAL_MS);
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

  // The merchant dashboard: its pages, its own API (sign-in, keys, settings) and its OpenAPI document. Made here for
  // the merchant REST API, which takes its session check; mounted below. Its writes (sessions, sign-in failures, keys, settings, users) are security-relevant: on the durable pool.
  const dashboard = createDashboardApi({
    sql: deps.durableSql,
    log,
    config,
    requester: deps.requester,
    registry: deps.registry,
  });
  app.use(createTrackingRoutes({ config, nc, consumeRate: rateLimiter.consume }));
  // The merchant REST API: key, plan, rate, scope, body, then the operation's service (surfaces/api-v1/router.ts).
  // It owns /api/v1 (its own 404 ends the path), so it comes second, after the tracking clicks: the two busiest
  // surfaces go through the fewest layers, and every other request skips its routes in one comparison.
  app.use(
    under(
      '/api/v1',
      createApiV1({
        config,
        sql,
        log,
        rate: rateLimiter,
        dashboard,
        recordUsage: deps.recordUsage,
        requester: deps.requester,
        maxPayload,
        beforePost: idempotency({
          refusals: apiRefusals,
          owner: (res) => (res.locals['key'] as KeyRecord | undefined)?.keyId,
        }),
      }),
    ),
  );

  // The affiliates' onboarding page: its single-use link is its only credential.
  app.use(createOnboardingPage({ config, requester: deps.requester, maxPayload }));
  // The public programme pages and their application form, /p/{slug} (surfaces/programme/router.ts).
  app.use(createProgrammePage({ config, sql: deps.durableSql, log, requester: deps.requester, maxPayload }));

  app.use(dashboard.router);
  // The affiliate portal: its pages, sign-in links and /portal/api, with a session of its own
  // (surfaces/portal/router.ts).
  app.use(createPortal({ config, sql: deps.durableSql, log, requester: deps.requester, maxPayload }));
  app.use(dashboardAssets(findDashboardDir()));
  // The development mailbox (surfaces/dev-mailbox/router.ts): not in production, where the route does not exist.
  if (config.APP_ENV !== 'production') app.use(createDevMailbox(deps.durableSql, decryptionKeys(config), log));
  app.use(createReferenceRouter());

  // The platform payment API: platform keys, Stripe's conventions, the payments service (surfaces/v1/router.ts).
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

/**
 * `router` for the paths under `prefix` only, matched as Express matches routes (ignoring case): a request elsewhere
 * skips all of its layers in one comparison, where Express would try each of its routes in turn.
 */
function under(prefix: string, router: RequestHandler): RequestHandler {
  const wanted = prefix.toLowerCase();
  return (req, res, next) => {
    const path = req.path;
    const after = path.charAt(wanted.length);
    if (path.slice(0, wanted.length).toLowerCase() === wanted && (after === '' || after === '/'))
      router(req, res, next);
    else next();
  };
}
