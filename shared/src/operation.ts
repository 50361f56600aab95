import type { Msg, MsgHdrs, NatsConnection, Subscription } from '@nats-io/transport-node';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { ApiOperation, OperationInput } from './api.ts';
import { headers } from '@nats-io/nats-core';
import {
  RPC_CONTENT_TYPE_HEADER,
  RPC_OUTCOME_HEADER,
  rpcSubject,
  type RpcError,
  type RpcOutcome,
  type RpcRequest,
} from './catalogue.ts';
import { isDatabaseUnavailable, type Sql } from './db.ts';
import { withCommitHook, withDeadline } from './deadline.ts';
import { keepReply, markCommitted } from './idempotent-reply.ts';
import { ApiError } from './errors.ts';
import type { Logger } from './log.ts';
import { decodeJson, encodeJson } from './nats.ts';
import { compileValidator } from './validation.ts';
import { createTurnBatch } from './turn-batch.ts';
import { context, endWithError, logFieldsOf } from './tracing/context.ts';
import { startConsumerSpan } from './tracing/nats.ts';

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
export type OperationResult =
  | { outcome: 'ok' | 'created'; body: unknown }
  | { outcome: 'ok'; body: string; contentType: 'text/csv' }
  | { outcome: 'no_content' };

export interface Operation {
  spec: ApiOperation;
  run(ctx: OperationContext, request: Pick<RpcRequest, 'params' | 'query' | 'body'>): Promise<OperationResult>;
}

/** Binds a handler to its catalogue entry; input is validated against the entry's schemas before the handler runs. */
export function defineOperation<O extends ApiOperation>(
  spec: O,
  handler: (ctx: OperationContext, input: OperationInput<O>) => Promise<OperationResult>,
): Operation {
  const validateParams = compileValidator<OperationInput<O>['params']>(spec.params, 'params');
  // A path segment that cannot be an id (a NUL byte, say) names nothing: NOT_FOUND, as for any unknown id.
  const params = (value: unknown) => {
    try {
      return validateParams(value);
    } catch (err) {
      if (err instanceof ApiError) throw new ApiError('NOT_FOUND', 'No such resource', undefined, { cause: err });
      throw err;
    }
  };
  const query = compileValidator<OperationInput<O>['query']>(spec.query, 'query');
  const body = spec.body ? compileValidator<OperationInput<O>['body']>(spec.body, 'body') : null;
  return {
    spec,
    run: (ctx, request) =>
      handler(ctx, {
        params: params(request.params),
        query: query(request.query),
        body: (body ? body(request.body ?? {}) : undefined) as OperationInput<O>['body'],
      }),
  };
}

/** The answer sent in place of a reply that could not be sent: small enough to fit any server's max_payload. */
const UNSENDABLE_REPLY = encodeJson({
  code: 'INTERNAL',
  message: 'Something went wrong on our side',
} satisfies RpcError);
const errorHeaders = () => {
  const h = headers();
  h.set(RPC_OUTCOME_HEADER, 'error' satisfies RpcOutcome);
  return h;
};

/**
 * Answers the gateway's requests for a service's operations. All replicas join one queue group, so each request is
 * handled by one replica. `drain` stops taking new requests and waits for those in flight (SIGTERM).
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
  const { nc, sql, prefix, log } = opts;
  const inFlight = new Set<Promise<void>>();
  const handled = new Counter({
    name: 'operations_total',
    help: 'Operations handled, by operation and result code',
    labelNames: ['operation', 'code'],
    registers: [opts.registry],
  });
  const duration = new Histogram({
    name: 'operation_duration_seconds',
    help: 'Time to handle an operation',
    labelNames: ['operation', 'code'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [opts.registry],
  });

  // Answers completed in one turn of the event loop leave in one socket write. A reply that cannot be sent (larger
  // than the server's max_payload, or the connection closed) must not throw out of here: it would skip the other
  // answers of the turn and end the process. It is logged and becomes an INTERNAL error answer when one can be sent.
  const respondInThisTurn = createTurnBatch(
    (answer: { msg: Msg; data: Uint8Array; headers: MsgHdrs; log: Logger; sent: () => void }) => {
      try {
        answer.msg.respond(answer.data, { headers: answer.headers });
      } catch (err) {
        answer.log.error('reply could not be sent; answering INTERNAL', { err, bytes: answer.data.length });
        try {
          answer.msg.respond(UNSENDABLE_REPLY, { headers: errorHeaders() });
        } catch (again) {
          answer.log.error('error answer could not be sent either', { err: again });
        }
      }
      answer.sent();
    },
  );

  /** One request, from its message to its answer. Made once, not per message (unnest.ts says why). */
  const handle = async (op: Operation, msg: Msg, started: number): Promise<void> => {
    let request: RpcRequest;
    try {
      request = decodeJson<RpcRequest>(msg.data);
    } catch {
      log.warn('undecodable rpc request', { operation: op.spec.operationId });
      return;
    }
    // The gateway has already answered 503: doing the work now would only surprise the caller later.
    if (Date.now() > request.deadline) {
      handled.inc({ operation: op.spec.operationId, code: 'EXPIRED' });
      // Nothing was done: the Idempotency-Key's claim the gateway kept is given up, so that a retry does the work.
      if (request.idempotency)
        await keepReply({ sql, encryptionKey: opts.encryptionKey, log }, request.idempotency, request, { done: false });
      return;
    }
    // The caller's trace continues here (its producer span's context in the headers), when tracing is on.
    const traced = startConsumerSpan(`process ${msg.subject}`, msg.subject, msg.headers);
    if (traced?.span.isRecording())
      traced.span.setAttributes({ 'merchant.id': request.merchant_id, 'rpc.method': op.spec.operationId });
    const reqLog = log.child({
      request_id: request.request_id,
      merchant_id: request.merchant_id,
      operation: op.spec.operationId,
      ...logFieldsOf(traced?.context),
    });
    let outcome: RpcOutcome;
    let body: unknown;
    let contentType: string | undefined;
    let code: string;
    try {
      const ctx = {
        sql,
        merchantId: request.merchant_id,
        keyId: request.key_id,
        requestId: request.request_id,
        log: reqLog,
      };
      // Its transactions roll back rather than commit past the gateway's deadline (deadline.ts), and those of a keyed
      // request mark its claim committed with the work (idempotent-reply.ts): the reply is kept only after the commit.
      const claim = request.idempotency;
      const work = () => op.run(ctx, request);
      const run = () =>
        withDeadline(
          request.deadline,
          claim ? () => withCommitHook(markCommitted(claim, request.request_id), work) : work,
        );
      const result = await (traced ? context.with(traced.context, run) : run());
      outcome = code = result.outcome;
      body = result.outcome === 'no_content' ? undefined : result.body;
      if ('contentType' in result) contentType = result.contentType;
    } catch (e) {
      let error: RpcError;
      if (e instanceof ApiError) {
        error = { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) };
      } else if (isDatabaseUnavailable(e)) {
        reqLog.warn('operation failed: database unavailable', { err: e });
        error = { code: 'UNAVAILABLE', message: 'The service is temporarily unavailable; try again' };
      } else {
        reqLog.error('operation failed', { err: e as Error });
        error = { code: 'INTERNAL', message: 'Something went wrong on our side' };
      }
      outcome = 'error';
      code = error.code;
      body = error;
    }
    if (traced) {
      traced.span.setAttribute('rpc.outcome', code);
      if (code === 'INTERNAL' || code === 'UNAVAILABLE') endWithError(traced.span, code);
      else traced.span.end();
    }
    handled.inc({ operation: op.spec.operationId, code });
    duration.observe({ operation: op.spec.operationId, code }, (performance.now() - started) / 1000);
    const h = headers();
    h.set(RPC_OUTCOME_HEADER, outcome);
    if (contentType) h.set(RPC_CONTENT_TYPE_HEADER, contentType);
    const data =
      outcome === 'no_content'
        ? new Uint8Array(0)
        : contentType
          ? Buffer.from(body as string, 'utf8')
          : encodeJson(body);
    // The work counts as in flight until the answer is handed to the client (drain waits for it).
    await new Promise<void>((sent) => respondInThisTurn({ msg, data, headers: h, log: reqLog, sent }));
    if (request.idempotency) {
      const done = code !== 'INTERNAL' && code !== 'UNAVAILABLE';
      await keepReply(
        { sql, encryptionKey: opts.encryptionKey, log: reqLog },
        request.idempotency,
        request,
        done ? { done, headers: h, data } : { done },
      );
    }
  };

  const subscriptions: Subscription[] = opts.operations.map((op) =>
    nc.subscribe(rpcSubject(prefix, op.spec.service, op.spec.name), {
      queue: op.spec.service,
      callback: (err, msg) => {
        if (err) {
          log.error('rpc subscription error', { operation: op.spec.operationId, err });
          return;
        }
        const work = handle(op, msg, performance.now());
        inFlight.add(work);
        void work.finally(() => inFlight.delete(work));
      },
    }),
  );

  return {
    async drain() {
      await Promise.all(subscriptions.map((s) => s.drain().catch(() => {})));
      await Promise.all([...inFlight]);
    },
  };
}
