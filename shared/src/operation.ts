import type { NatsConnection } from '@nats-io/transport-node';
import type { Static, TSchema } from '@sinclair/typebox';
import type { Registry } from 'prom-client';
import type { ApiOperation, OperationInput } from './api.ts';
import { rpcSubject, type RpcRequest } from './catalogue.ts';
import type { Sql } from './db.ts';
import { ApiError } from './errors.ts';
import type { Logger } from './log.ts';
import { serveRequests, type Reply, type Route } from './request-server.ts';
import { compileValidator, envelopeRefusals, type InputRefusals } from './validation.ts';

/** What a handler gets besides its validated input. */
export interface OperationContext {
  sql: Sql;
  merchantId: string;
  /** Who asked, as the gateway authenticated them: an API key (key_…) or a dashboard user (usr_…). */
  keyId: string;
  requestId: string;
  log: Logger;
}

/**
 * `no_content` answers 204 with no body (a delete). A `contentType` answers `body` (then a string) as that text
 * instead of JSON: the operation's catalogue entry declares the same type.
 */
export type OperationResult = Reply;

/** The schemas an operation's input is checked against, by the part of the request each checks. */
export interface InputSpec {
  params: TSchema;
  query?: TSchema;
  body?: TSchema | null;
}

/** The input a handler gets: each part of the request its spec has a schema for, checked (and coerced). */
export type InputOf<S extends InputSpec> = {
  params: Static<S['params']>;
  query: S['query'] extends TSchema ? Static<S['query']> : undefined;
  body: S['body'] extends TSchema ? Static<S['body']> : undefined;
};

export interface Operation<Ctx = OperationContext, S extends InputSpec = ApiOperation> {
  spec: S;
  /**
   * Checks the request's input, then makes the handler's context and runs it: making the context may refuse too (the
   * /v1 surface's Stripe-Account), after the input's refusal.
   */
  run(
    context: () => Ctx | Promise<Ctx>,
    request: { params?: unknown; query?: unknown; body?: unknown },
  ): Promise<OperationResult>;
}

/**
 * Binds a handler to its spec (an /api/v1 catalogue entry, a /v1 operation): the input is validated against the
 * spec's schemas before the handler runs. A refusal is the error envelope's INVALID_INPUT, or what `refusals` words
 * (the /v1 surface's Stripe errors); with the envelope, a path segment that cannot be an id (a NUL byte, say) names
 * nothing: NOT_FOUND, as for any unknown id.
 */
export function defineOperation<O extends ApiOperation>(
  spec: O,
  handler: (ctx: OperationContext, input: OperationInput<O>) => Promise<OperationResult>,
): Operation;
export function defineOperation<S extends InputSpec, Ctx>(
  spec: S,
  handler: (ctx: Ctx, input: InputOf<S>) => Promise<OperationResult>,
  refusals: InputRefusals,
): Operation<Ctx, S>;
export function defineOperation<S extends InputSpec, Ctx>(
  spec: S,
  handler: (ctx: Ctx, input: InputOf<S>) => Promise<OperationResult>,
  refusals: InputRefusals = envelopeRefusals,
): Operation<Ctx, S> {
  const validateParams = compileValidator<InputOf<S>['params']>(spec.params, 'params', refusals);
  const params =
    refusals === envelopeRefusals
      ? (value: unknown) => {
          try {
            return validateParams(value);
          } catch (err) {
            if (err instanceof ApiError) throw new ApiError('NOT_FOUND', 'No such resource', undefined, { cause: err });
            throw err;
          }
        }
      : validateParams;
  const query = spec.query ? compileValidator<InputOf<S>['query']>(spec.query, 'query', refusals) : null;
  const body = spec.body ? compileValidator<InputOf<S>['body']>(spec.body, 'body', refusals) : null;
  return {
    spec,
    async run(context, request) {
      const input = {
        params: params(request.params ?? {}),
        query: query ? query(request.query ?? {}) : undefined,
        body: body ? body(request.body ?? {}) : undefined,
      } as InputOf<S>;
      return handler(await context(), input);
    },
  };
}

/**
 * Answers the gateway's requests for a service's operations (request-server.ts), in the error envelope. All
 * replicas join one queue group, so each request is handled by one replica. `drain` stops taking new requests and
 * waits for those in flight (SIGTERM).
 */
export function serveOperations(opts: {
  nc: NatsConnection;
  sql: Sql;
  prefix: string;
  operations: Operation[];
  log: Logger;
  registry: Registry;
  /** Seals the replies kept on Idempotency-Key claims (idempotent-reply.ts). */
  encryptionKey: Buffer;
}): { drain(): Promise<void> } {
  const { sql } = opts;
  const routes = opts.operations.map((op): Route<RpcRequest> => ({
    subject: rpcSubject(opts.prefix, op.spec.service, op.spec.name),
    queue: op.spec.service,
    name: op.spec.operationId,
    run: (request, log) =>
      op.run(
        () => ({ sql, merchantId: request.merchant_id, keyId: request.key_id, requestId: request.request_id, log }),
        request,
      ),
  }));
  const server = serveRequests({
    nc: opts.nc,
    routes,
    log: opts.log,
    registry: opts.registry,
    metrics: {
      label: 'operation',
      total: { name: 'operations_total', help: 'Operations handled, by operation and result code' },
      duration: { name: 'operation_duration_seconds', help: 'Time to handle an operation' },
    },
    idempotency: { sql, encryptionKey: opts.encryptionKey },
  });
  return { drain: () => server.stop() };
}
