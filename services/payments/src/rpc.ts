import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { headers } from '@nats-io/nats-core';
import { Counter, Histogram, type Registry } from 'prom-client';
import { RPC_OUTCOME_HEADER, rpcSubject, type RpcOutcome } from '@platform/shared/catalogue';
import { isDatabaseUnavailable, type Sql } from '@platform/shared/db';
import { withCommitHook, withDeadline } from '@platform/shared/deadline';
import { keepReply, markCommitted, type IdempotencyClaim } from '@platform/shared/idempotent-reply';
import type { Logger } from '@platform/shared/log';
import { decodeJson, encodeJson } from '@platform/shared/nats';
import { StripeError, type PaymentsRpcError } from '@platform/shared/payments/errors';

/** One subject the payments service answers: a /v1 operation or an onboarding page's request. */
export interface Handler<R extends { request_id: string; deadline: number }> {
  name: string;
  run(request: R, log: Logger): Promise<unknown>;
}

/**
 * Answers the gateway's requests on {prefix}.rpc.payments.{name} (queue group "payments": one replica answers each).
 * A StripeError becomes its status and error object; a database outage 503 `api_error`; anything else 500 without
 * detail. `drain` stops taking requests and waits for those in flight.
 */
export function servePayments(opts: {
  nc: NatsConnection;
  prefix: string;
  handlers: Handler<{ request_id: string; deadline: number }>[];
  log: Logger;
  registry: Registry;
  /** Where replies are kept on Idempotency-Key claims, and the key that seals them (idempotent-reply.ts). */
  sql: Sql;
  encryptionKey: Buffer;
}): { stop(): Promise<void> } {
  const { nc, prefix, log } = opts;
  const inFlight = new Set<Promise<void>>();
  const handled = new Counter({
    name: 'payment_operations_total',
    help: 'Payment API operations and onboarding requests handled, by operation and result code',
    labelNames: ['operation', 'code'],
    registers: [opts.registry],
  });
  const duration = new Histogram({
    name: 'payment_operation_duration_seconds',
    help: 'Time to handle a payment API operation',
    labelNames: ['operation', 'code'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [opts.registry],
  });

  const answer = async (handler: Handler<{ request_id: string; deadline: number }>, msg: Msg, started: number) => {
    let request: { request_id: string; deadline: number; idempotency?: IdempotencyClaim };
    try {
      request = decodeJson(msg.data);
    } catch {
      log.warn('undecodable rpc request', { operation: handler.name });
      return;
    }
    if (Date.now() > request.deadline) {
      handled.inc({ operation: handler.name, code: 'EXPIRED' });
      // Nothing was done: the Idempotency-Key's claim the gateway kept is given up, so that a retry does the work.
      if (request.idempotency)
        await keepReply({ sql: opts.sql, encryptionKey: opts.encryptionKey, log }, request.idempotency, request, {
          done: false,
        });
      return;
    }
    const reqLog = log.child({ request_id: request.request_id, operation: handler.name });
    let outcome: RpcOutcome = 'ok';
    let body: unknown;
    let code = 'ok';
    try {
      // Its transactions roll back rather than commit past the gateway's deadline (shared/src/deadline.ts), and those
      // of a keyed request mark its claim committed with the work (idempotent-reply.ts): the reply is kept after it.
      const claim = request.idempotency;
      const work = () => handler.run(request, reqLog);
      body = await withDeadline(
        request.deadline,
        claim ? () => withCommitHook(markCommitted(claim, request.request_id), work) : work,
      );
    } catch (err) {
      outcome = 'error';
      let refusal: PaymentsRpcError;
      if (err instanceof StripeError) refusal = { status: err.status, error: err.body };
      else if (isDatabaseUnavailable(err)) {
        reqLog.warn('operation failed: database unavailable', { err });
        refusal = {
          status: 503,
          error: { type: 'api_error', message: 'The service is temporarily unavailable; try again' },
        };
      } else {
        reqLog.error('operation failed', { err: err as Error });
        refusal = { status: 500, error: { type: 'api_error', message: 'Something went wrong on our side' } };
      }
      code = refusal.error.code ?? String(refusal.status);
      body = refusal;
    }
    handled.inc({ operation: handler.name, code });
    duration.observe({ operation: handler.name, code }, (performance.now() - started) / 1000);
    const h = headers();
    h.set(RPC_OUTCOME_HEADER, outcome);
    const data = encodeJson(body);
    msg.respond(data, { headers: h });
    if (request.idempotency) {
      const done = outcome === 'ok' || (body as PaymentsRpcError).status < 500;
      await keepReply(
        { sql: opts.sql, encryptionKey: opts.encryptionKey, log: reqLog },
        request.idempotency,
        request,
        done ? { done, headers: h, data } : { done },
      );
    }
  };

  const subscriptions: Subscription[] = opts.handlers.map((handler) =>
    nc.subscribe(rpcSubject(prefix, 'payments', handler.name), {
      queue: 'payments',
      callback: (err, msg) => {
        if (err) return log.error('rpc subscription error', { operation: handler.name, err });
        const work = answer(handler, msg, performance.now());
        inFlight.add(work);
        void work.finally(() => inFlight.delete(work));
      },
    }),
  );

  return {
    async stop() {
      await Promise.all(subscriptions.map((s) => s.drain().catch(() => {})));
      await Promise.all([...inFlight]);
    },
  };
}
