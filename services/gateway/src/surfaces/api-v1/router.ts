import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { operations, type ApiOperation } from '@platform/shared/api';
import { ApiError, type ErrorDetail } from '@platform/shared/errors';
import { compileValidator } from '@platform/shared/validation';
import type { GatewayConfig } from '../../config.ts';
import { checkJsonBody, drainBody, verifyUtf8 } from '../../http/body-guard.ts';
import { forward } from '../../http/forward.ts';
import { sendError, sendServiceError } from '../../http/http-errors.ts';
import { claimOf, claimRequester } from '../../http/idempotency/kept-reply.ts';
import { apiPermission, can, refusal } from '../../http/accounts/permissions.ts';
import type { KeyRecord } from './keys.ts';
import { toExpressPath } from '../../http/openapi/express-path.ts';
import { apiV1Document, serveDocument } from '../../http/openapi/documents.ts';
import { requestContext } from '../../http/request-span.ts';
import type { Requester } from '../../http/requester.ts';
import { createApiV1Authentication, type ApiV1AuthDeps } from './authenticate.ts';
import { openApiSpec } from './specs.ts';

const BODY_LIMIT = '1mb';
const JSON_TYPES = ['application/json', 'application/*+json'];

export interface ApiV1Deps extends ApiV1AuthDeps {
  config: GatewayConfig;
  requester: Requester;
  maxPayload: () => number;
  /** Runs for every POST after its body is parsed, before the operation: Idempotency-Key. */
  beforePost: RequestHandler;
}

/**
 * The merchant REST API (/api/v1): its document, the key, plan and rate checks (authenticate.ts), then each
 * operation of the catalogue (its spec, shared/src/api) behind its scope and body checks, forwarded to its service
 * over NATS by one handler.
 */
export function createApiV1(deps: ApiV1Deps): express.Router {
  const { config } = deps;
  const router = express.Router();
  router.use(serveDocument(openApiSpec.path, openApiSpec.operationId, apiV1Document(config.PUBLIC_BASE_URL)));
  router.use('/api/v1', createApiV1Authentication(deps));

  // strict: false parses any JSON value, so that `null`, `42` or `"x"` are refused as what they are (not an object),
  // not as invalid JSON.
  const jsonParser = express.json({ limit: BODY_LIMIT, strict: false, type: JSON_TYPES, verify: verifyUtf8 });
  const isJsonObject = (body: unknown) => typeof body === 'object' && body !== null && !Array.isArray(body);

  function operationHandlers(op: ApiOperation) {
    const permission = apiPermission(op);
    const checkScope = (_req: Request, res: Response, next: NextFunction) => {
      res.locals['route'] = op.operationId;
      const key = res.locals['key'] as KeyRecord;
      if (key.role && !can(key.role, permission)) return sendError(res, 'FORBIDDEN', refusal(key.role, permission));
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
        deps.maxPayload(),
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
    return op.method === 'post' ? [checkScope, parseBody, deps.beforePost, run] : [checkScope, parseBody, run];
  }

  for (const op of operations) router[op.method](toExpressPath(op.path), operationHandlers(op));
  // Answered here, not left to the app: a router would answer an unmatched OPTIONS itself, with an Allow header
  // that reveals the routes.
  router.use('/api/v1', (_req, res) => sendError(res, 'NOT_FOUND', 'No such route'));
  return router;
}
