import { createHmac } from 'node:crypto';
import { context, endWithError, trace } from '@platform/shared/tracing/context';
import { startProducerSpan } from '@platform/shared/tracing/nats';
import type { NatsConnection } from '@nats-io/transport-node';
import express, { type NextFunction, type Request, type Response } from 'express';
import {
  RPC_OUTCOME_HEADER,
  trackingSubject,
  type RpcError,
  type TrackingClient,
  type TrackingOperation,
  type TrackReferralReply,
  type TrackReferralRequest,
  type TrackVisitRequest,
} from '@platform/shared/catalogue';
import { withinDeadline } from '@platform/shared/db';
import { encryptionKey } from '@platform/shared/config';
import { createHmacKey } from '@platform/shared/crypto';
import { decodeJson, encodeJson } from '@platform/shared/nats';
import { VISIT_COOKIE } from '@platform/shared/schemas/tracking';
import type { GatewayConfig } from '../../config.ts';
import { sendError, sendServiceError } from '../../http/http-errors.ts';
import type { RateDecision } from '../../http/rate-limit/limiter.ts';
import { readCookie } from '../../http/cookies.ts';
import { TRACKING_SCRIPT } from './script.ts';

const VISIT_BODY_LIMIT = '8kb';
const SCRIPT_CACHE_SECONDS = 3600;

type Reply =
  { kind: 'ok'; created: boolean; data: Uint8Array } | { kind: 'error'; error: RpcError } | { kind: 'unavailable' };

/**
 * Public referral tracking, no API key (mounted before the /api/v1 checks):
 * - GET /r/{merchant_id}/{slug}, and GET /r/{slug} on a merchant's own tracking host: records a visit, sets the
 *   `_svc_sess` cookie on that host and redirects (302) to the merchant's landing page with ?via={slug}.
 * - GET /t/script.js: the tracking script merchants embed; POST /t/visit: what it calls (CORS open to any origin,
 *   without credentials: the endpoint is public and answers only a visit id).
 * The events service records the visits (catalogue: trackingSubject); errors are the API's JSON envelope.
 *
 * Recording a visit writes a row, and these routes need no key: each client IP may record at most
 * TRACKING_RATE_LIMIT_PER_MIN visits a minute, counted by the API keys' limiter (so across every replica) under an
 * HMAC of the address, never the address itself. Past it, 429 RATE_LIMITED with Retry-After; the script itself is
 * not counted.
 *
 * The cookie is not HttpOnly: the tracking script must read it to keep one visit per click, and it holds only a
 * visit id, which grants nothing. SameSite=Lax keeps it on top-level navigations; Secure whenever served over https.
 */
export function createTrackingRoutes(deps: {
  config: GatewayConfig;
  nc: NatsConnection;
  consumeRate: (counterId: string, limit: number) => Promise<RateDecision>;
}): express.Router {
  const { config, nc } = deps;
  const router = express.Router();
  const visitJson = express.json({ limit: VISIT_BODY_LIMIT, strict: true, type: 'application/json' });
  const ipKey = createHmacKey(encryptionKey(config), 'tracking-rate');

  const limitVisits = async (req: Request, res: Response, next: NextFunction) => {
    // No address (the socket already closed): nothing to count it under, and nothing to answer.
    if (!req.ip) return next();
    const counter = `visits:${createHmac('sha256', ipKey).update(req.ip).digest('base64url')}`;
    let rate: RateDecision;
    try {
      // A bounded wait, as for the API's rate (surfaces/api-v1/authenticate.ts): the database may be unreachable.
      rate = await withinDeadline(deps.consumeRate(counter, config.TRACKING_RATE_LIMIT_PER_MIN), config.RPC_TIMEOUT_MS);
    } catch {
      return sendError(res, 'UNAVAILABLE', 'The service is temporarily unavailable');
    }
    if (rate.allowed) return next();
    res.setHeader('Retry-After', String(rate.resetSeconds));
    sendError(res, 'RATE_LIMITED', `At most ${rate.limit} visits a minute may be recorded from one address`);
  };

  const ask = async (
    operation: TrackingOperation,
    request: TrackReferralRequest | TrackVisitRequest,
  ): Promise<Reply> => {
    let reply;
    const subject = trackingSubject(config.NATS_PREFIX, operation);
    // With tracing on, a producer span in the visit's request, its context in the message's headers.
    const active = context.active();
    const traced = trace.getSpan(active) ? startProducerSpan(subject, active) : null;
    try {
      reply = await nc.request(subject, encodeJson(request), {
        timeout: config.RPC_TIMEOUT_MS,
        ...(traced ? { headers: traced.headers } : {}),
      });
      traced?.span.end();
    } catch (err) {
      if (traced) endWithError(traced.span, err);
      return { kind: 'unavailable' };
    }
    const outcome = reply.headers?.get(RPC_OUTCOME_HEADER);
    if (outcome === 'ok' || outcome === 'created')
      return { kind: 'ok', created: outcome === 'created', data: reply.data };
    return { kind: 'error', error: decodeJson<RpcError>(reply.data) };
  };

  const countryHeader = config.GEO_COUNTRY_HEADER;
  /**
   * What the events service keeps a summary of. The country header is passed as it came (the events service checks
   * it is a country code): the proxy named by GEO_COUNTRY_HEADER sets it, and without that setting it is ignored,
   * since any client can send one. A referral link's Referer is where the visitor clicked it; on POST /t/visit it is
   * the merchant's own page, and the body carries the page's referrer instead.
   */
  const client = (req: Request, referrer: string | null): TrackingClient => ({
    ip: req.ip ?? null,
    user_agent: req.get('user-agent') ?? null,
    referrer,
    country: countryHeader ? (req.get(countryHeader) ?? null) : null,
  });

  const referralRoute = (req: Request, res: Response, next: NextFunction) => {
    res.locals['route'] = 'trackReferral';
    res.setHeader('Cache-Control', 'no-store');
    next();
  };
  const referral = (merchant: TrackReferralRequest['merchant']) => async (req: Request, res: Response) => {
    const reply = await ask('referral', {
      request_id: res.locals['requestId'] as string,
      deadline: Date.now() + config.RPC_TIMEOUT_MS,
      merchant,
      slug: req.params['slug'] as string,
      current_visit_id: readCookie(req, VISIT_COOKIE),
      client: client(req, req.get('referer') ?? null),
    });
    if (reply.kind === 'unavailable')
      return sendError(res, 'UNAVAILABLE', 'The service did not answer in time; try again');
    if (reply.kind === 'error') return sendServiceError(res, reply.error);
    const visit = decodeJson<TrackReferralReply>(reply.data);
    res.cookie(VISIT_COOKIE, visit.visit_id, {
      maxAge: visit.max_age_seconds * 1000,
      path: '/',
      sameSite: 'lax',
      secure: req.secure,
      httpOnly: false,
    });
    res.redirect(302, visit.redirect_url);
  };

  router.get('/r/:merchant_id/:slug', referralRoute, limitVisits, (req, res) =>
    referral({ id: req.params['merchant_id'] as string })(req, res),
  );
  router.get('/r/:slug', referralRoute, limitVisits, (req, res) => referral({ host: req.hostname })(req, res));

  router.get('/t/script.js', (_req, res) => {
    res.locals['route'] = 'trackingScript';
    // Loaded by other sites' pages: helmet's same-origin resource policy would make browsers refuse it.
    res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
    res.setHeader('Cache-Control', `public, max-age=${SCRIPT_CACHE_SECONDS}`);
    res.type('application/javascript; charset=utf-8').send(TRACKING_SCRIPT);
  });

  const allowAnyOrigin = (_req: Request, res: Response, next: NextFunction) => {
    res.locals['route'] = 'trackVisit';
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
    next();
  };

  router.options('/t/visit', allowAnyOrigin, (_req, res) => {
    res.setHeader('Access-Control-Allow-Methods', 'POST');
    res.setHeader('Access-Control-Allow-Headers', 'Content-Type');
    res.setHeader('Access-Control-Max-Age', '86400');
    res.status(204).end();
  });

  router.post(
    '/t/visit',
    allowAnyOrigin,
    limitVisits,
    (req, res, next) => {
      if (!req.is('application/json')) {
        return sendError(res, 'INVALID_INPUT', 'The body must be JSON (Content-Type: application/json)', {
          status: 415,
        });
      }
      visitJson(req, res, next);
    },
    async (req: Request, res: Response) => {
      res.setHeader('Cache-Control', 'no-store');
      const reply = await ask('visit', {
        request_id: res.locals['requestId'] as string,
        deadline: Date.now() + config.RPC_TIMEOUT_MS,
        body: req.body ?? {},
        client: client(req, null),
      });
      if (reply.kind === 'unavailable')
        return sendError(res, 'UNAVAILABLE', 'The service did not answer in time; try again');
      if (reply.kind === 'error') return sendServiceError(res, reply.error);
      res
        .status(reply.created ? 201 : 200)
        .type('application/json')
        .send(Buffer.from(reply.data));
    },
  );

  // Body problems of /t/visit, with its own limit in the message; anything else goes on to the app's handler.
  router.use((err: Error & { type?: string }, _req: Request, res: Response, next: NextFunction) => {
    if (res.locals['route'] !== 'trackVisit' || res.headersSent) return next(err);
    switch (err.type) {
      case 'entity.parse.failed':
        return sendError(res, 'INVALID_INPUT', 'The body is not valid JSON', {
          details: [{ path: 'body', message: 'is not valid JSON' }],
        });
      case 'entity.too.large':
        return sendError(res, 'INVALID_INPUT', `The body exceeds ${VISIT_BODY_LIMIT}`, { status: 413 });
      default:
        return next(err);
    }
  });

  return router;
}
