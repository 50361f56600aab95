import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { RPC_OUTCOME_HEADER, rpcSubject } from '@platform/shared/catalogue';
import { isDatabaseUnavailable, withinDeadline, type Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { decodeJson, encodeJson } from '@platform/shared/nats';
import type { PaymentsRpcError } from '@platform/shared/payments/errors';
import { paymentsOperations, type PaymentsOperation } from '@platform/shared/payments/operations';
import type { PaymentsRpcRequest } from '@platform/shared/payments/rpc';
import type { GatewayConfig } from '../../config.ts';
import type { RateDecision } from '../../http/rate-limit/limiter.ts';
import type { Requester } from '../../http/requester.ts';
import { sendStripeError } from './errors.ts';
import { drainBody } from '../../http/body-guard.ts';
import { claimOf, claimRequester } from '../../http/idempotency/kept-reply.ts';
import { paymentsDocument, serveDocument } from '../../http/openapi/documents.ts';
import { toExpressPath } from '../../http/openapi/express-path.ts';
import { FormError, parseForm } from './form.ts';
import { createOnboardingRoutes } from './onboarding.ts';
import { createPlatformKeyResolver, type PlatformKeyRecord } from './platform-keys.ts';

const BODY_LIMIT = '1mb';
const ACCOUNT_HEADER = /^acct_[0-9a-z]{1,64}$/;

export interface V1Deps {
  config: GatewayConfig;
  sql: Sql;
  log: Logger;
  requester: Requester;
  maxPayload: () => number;
  consumeRate: (keyId: string, limit: number) => Promise<RateDecision>;
  /** Runs for every POST after its parameters are decoded (into req.body), before the operation: Idempotency-Key. */
  beforePost?: RequestHandler;
}

/**
 * The platform payment API (/v1) at the edge, in Stripe's wire conventions: `authenticate` checks the platform key
 * (sk_test_/sk_live_, 401) and the key's rate (429); `routes` decodes the form body or query string (bracket notation)
 * and forwards each operation to the payments service over NATS; `beforePost` (Idempotency-Key) runs between the
 * two for every POST. The key is left in res.locals['platformKey'].
 */
export function createV1(deps: V1Deps): { authenticate: RequestHandler; routes: express.Router } {
  const { config, log } = deps;
  const resolveKey = createPlatformKeyResolver(deps.sql, config.KEY_CACHE_MS);

  const authenticate: RequestHandler = async (req, res, next) => {
    res.setHeader('Request-Id', res.locals['requestId'] as string);
    if (req.path === '/openapi') return next();
    try {
      const deadline = Date.now() + config.RPC_TIMEOUT_MS;
      res.locals['deadline'] = deadline;
      const header = req.get('authorization');
      const value = header ? /^Bearer +(\S+) *$/i.exec(header)?.[1] : undefined;
      if (!value)
        return sendStripeError(res, 401, {
          type: 'invalid_request_error',
          message:
            "You did not provide an API key. Provide your platform key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer sk_test_…').",
        });
      const key = await withinDeadline(resolveKey(value), config.RPC_TIMEOUT_MS);
      if (!key)
        return sendStripeError(res, 401, {
          type: 'invalid_request_error',
          message: `Invalid API Key provided: ${mask(value)}`,
        });
      res.locals['platformKey'] = key;
      const rate = await withinDeadline(
        deps.consumeRate(key.keyId, key.rateLimitPerMin),
        Math.max(1, deadline - Date.now()),
      );
      res.setHeader('RateLimit-Limit', String(rate.limit));
      res.setHeader('RateLimit-Remaining', String(rate.remaining));
      res.setHeader('RateLimit-Reset', String(rate.resetSeconds));
      if (!rate.allowed) {
        res.setHeader('Retry-After', String(rate.resetSeconds));
        return sendStripeError(res, 429, {
          type: 'invalid_request_error',
          code: 'rate_limit',
          message: `Too many requests: this key allows ${rate.limit} a minute. Retry after ${rate.resetSeconds} s.`,
        });
      }
      next();
    } catch (err) {
      if (isDatabaseUnavailable(err)) log.warn('platform key check failed: database unavailable', { err });
      else log.error('platform key check failed', { err: err as Error, request_id: res.locals['requestId'] });
      sendStripeError(res, 503, { type: 'api_error', message: 'The service is temporarily unavailable; try again' });
    }
  };

  const routes = express.Router();
  routes.use(serveDocument('/v1/openapi', 'v1.openapi', paymentsDocument(config.PUBLIC_BASE_URL)));
  routes.use(
    createOnboardingRoutes({
      requester: deps.requester,
      prefix: config.NATS_PREFIX,
      timeoutMs: config.RPC_TIMEOUT_MS,
      log,
    }),
  );
  const formText = express.text({ type: () => true, limit: BODY_LIMIT });
  /** The query string (GET) or form body (POST) decoded from bracket notation into req.body, for what follows. */
  const parseParams =
    (op: PaymentsOperation): RequestHandler =>
    (req, res, next) => {
      res.locals['route'] = `v1.${op.name}`;
      const decode = (text: string) => {
        try {
          req.body = parseForm(text);
          next();
        } catch (err) {
          if (!(err instanceof FormError)) return next(err);
          sendStripeError(res, 400, { type: 'invalid_request_error', message: err.message, param: err.param });
        }
      };
      if (op.method === 'get') return decode(queryText(req));
      if (req.is(['application/json', 'application/*+json']))
        return drainBody(req, () =>
          sendStripeError(res, 400, {
            type: 'invalid_request_error',
            message: 'Invalid request: the body must be form-encoded (application/x-www-form-urlencoded), not JSON.',
          }),
        );
      formText(req, res, (err?: unknown) => (err ? bodyRefused(res, err, next) : decode(bodyText(req))));
    };
  for (const op of paymentsOperations) {
    const before = op.method === 'post' && deps.beforePost ? [deps.beforePost] : [];
    routes[op.method](toExpressPath(op.path), parseParams(op), ...before, (req, res, next) => {
      void run(op, req, res).catch(next);
    });
  }
  routes.use('/v1', (req, res) =>
    sendStripeError(res, 404, {
      type: 'invalid_request_error',
      message: `Unrecognized request URL (${req.method}: ${req.originalUrl.split('?')[0]}).`,
    }),
  );

  async function run(op: PaymentsOperation, req: Request, res: Response): Promise<void> {
    const key = res.locals['platformKey'] as PlatformKeyRecord;
    const params = req.body as Record<string, unknown>;
    const account = req.get('stripe-account') ?? null;
    if (account !== null && !ACCOUNT_HEADER.test(account))
      return sendStripeError(res, 403, {
        type: 'invalid_request_error',
        code: 'account_invalid',
        message: `The provided key does not have access to account '${account}' (or that account does not exist).`,
      });
    const deadline = (res.locals['deadline'] as number | undefined) ?? Date.now() + config.RPC_TIMEOUT_MS;
    const request: PaymentsRpcRequest = {
      request_id: res.locals['requestId'] as string,
      deadline,
      key_id: key.keyId,
      livemode: key.livemode,
      account,
      path: req.params.id ? { id: String(req.params.id) } : {},
      params,
    };
    const claim = claimOf(res);
    if (claim) request.idempotency = claim;
    const payload = encodeJson(request);
    if (payload.byteLength > deps.maxPayload())
      return sendStripeError(res, 400, { type: 'invalid_request_error', message: 'The request is too large.' });
    const answer = await claimRequester(res, deps.requester).request(
      rpcSubject(config.NATS_PREFIX, 'payments', op.name),
      payload,
      Math.max(1, deadline - Date.now()),
    );
    if (answer.kind !== 'reply')
      return sendStripeError(res, 503, { type: 'api_error', message: 'The service did not answer in time; try again' });
    const { msg } = answer;
    if (msg.headers?.get(RPC_OUTCOME_HEADER) === 'ok') {
      res
        .status(200)
        .type('application/json')
        .send(Buffer.from(msg.data.buffer, msg.data.byteOffset, msg.data.byteLength));
      return;
    }
    const refusal = decodeJson<PaymentsRpcError>(msg.data);
    sendStripeError(res, refusal.status, refusal.error);
  }

  return { authenticate, routes };
}

/** The raw query string: Express's own query parser does not read bracket notation. */
const queryText = (req: Request) => {
  const at = req.originalUrl.indexOf('?');
  return at < 0 ? '' : req.originalUrl.slice(at + 1);
};

/** A form body, or none; a JSON body is refused by the form parser as what it is not. */
const bodyText = (req: Request) => (typeof req.body === 'string' ? req.body : '');

function bodyRefused(res: Response, err: unknown, next: NextFunction): void {
  const type = (err as { type?: string }).type;
  if (type === 'entity.too.large') {
    res.setHeader('Connection', 'close');
    return sendStripeError(res, 413, { type: 'invalid_request_error', message: 'The body exceeds 1 MiB.' });
  }
  if (type === 'encoding.unsupported' || type === 'charset.unsupported' || type === 'request.aborted')
    return sendStripeError(res, 400, { type: 'invalid_request_error', message: 'The body could not be read.' });
  next(err);
}

/** Stripe shows a refused key with all but its last four characters hidden. */
const mask = (value: string) => {
  const prefix = /^sk_(test|live)_/.exec(value)?.[0] ?? '';
  return `${prefix}${'*'.repeat(Math.max(0, Math.min(value.length - prefix.length - 4, 24)))}${value.slice(-4)}`;
};
