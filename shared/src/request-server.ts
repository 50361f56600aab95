import type { Msg, MsgHdrs, NatsConnection, Subscription } from '@nats-io/transport-node';
import { headers } from '@nats-io/nats-core';
import { Counter, Histogram, type Registry } from 'prom-client';
import { RPC_CONTENT_TYPE_HEADER, RPC_OUTCOME_HEADER, type RpcError, type RpcOutcome } from './catalogue.ts';
import { isDatabaseUnavailable, isRolledBackForAnother, type Sql } from './db.ts';
import { withCommitHook, withDeadline } from './deadline.ts';
import { ApiError } from './errors.ts';
import { keepReply, markCommitted, type IdempotencyClaim } from './idempotent-reply.ts';
import type { Logger } from './log.ts';
import { decodeJson, encodeJson } from './nats.ts';
import type { Worker } from './worker.ts';
import { createTurnBatch } from './turn-batch.ts';
import { context, endWithError, logFieldsOf } from './tracing/context.ts';
import { startConsumerSpan } from './tracing/nats.ts';

/** What every request carries: who asked it, the caller's deadline, and an Idempotency-Key's claim, if any. */
export interface RequestBase {
  request_id: string;
  /** Epoch milliseconds after which the caller has given up; a request that arrives later is dropped. */
  deadline: number;
  /** The merchant the request acts for, where there is one: logged and set on the trace. */
  merchant_id?: string;
  /** The Idempotency-Key's claim the request holds: its reply is kept on it (idempotent-reply.ts). */
  idempotency?: IdempotencyClaim;
}

/**
 * A success: `no_content` has no body (a delete). A `contentType` answers `body` (then a string) as that text
 * instead of JSON.
 */
export type Reply =
  | { outcome: 'ok' | 'created'; body: unknown }
  | { outcome: 'ok'; body: string; contentType: 'text/csv' }
  | { outcome: 'no_content' };

/** One subject a server answers. */
export interface Route<R extends RequestBase = RequestBase> {
  subject: string;
  /** All replicas join this queue group, so each request is answered by one of them. */
  queue: string;
  /** What is asked, as metrics and logs name it. */
  name: string;
  run(request: R, log: Logger): Promise<Reply>;
}

/** What a surface answers for a handler's failure. */
export interface Refusal {
  /** The metric label and trace outcome: an error code. */
  code: string;
  body: unknown;
  /** A refusal the caller will be given again: kept on an Idempotency-Key's claim. Not one on our side (a retry must do the work). */
  final: boolean;
}

/**
 * How a surface words its errors (the error envelope, or the /v1 surface's Stripe error object): the refusal for
 * what a handler threw, and the answer for a failure on our side, sent too in place of a reply that cannot be sent.
 */
export interface ErrorFormat {
  refusal(err: unknown, log: Logger): Refusal;
  internal: unknown;
  /** The answer to a request the server is too busy to take (it has `maxInFlight` already): the caller tries again. */
  unavailable: { code: string; body: unknown };
}

const envelopeInternal: RpcError = { code: 'INTERNAL', message: 'Something went wrong on our side' };
const envelopeUnavailable: RpcError = {
  code: 'UNAVAILABLE',
  message: 'The service is temporarily unavailable; try again',
};

/** The error envelope (catalogue.ts RpcError): ApiError as it is, a database outage UNAVAILABLE, else INTERNAL. */
export const envelopeErrors: ErrorFormat = {
  refusal(err, log) {
    let error: RpcError;
    if (err instanceof ApiError) {
      error = { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) };
    } else if (isRolledBackForAnother(err)) {
      // Answered as an outage (the caller's retry gets past it), but logged as the lock-order bug it usually is.
      log.error('operation failed: rolled back for a concurrent transaction', { err: err as Error });
      error = envelopeUnavailable;
    } else if (isDatabaseUnavailable(err)) {
      log.warn('operation failed: database unavailable', { err });
      error = envelopeUnavailable;
    } else {
      log.error('operation failed', { err: err as Error });
      error = envelopeInternal;
    }
    return { code: error.code, body: error, final: error.code !== 'INTERNAL' && error.code !== 'UNAVAILABLE' };
  },
  internal: envelopeInternal,
  unavailable: { code: envelopeUnavailable.code, body: envelopeUnavailable },
};

/**
 * How many requests a server works on at once unless told. Past it a request is answered UNAVAILABLE at once instead
 * of waiting in memory behind the others (for the pool, mostly) until after its caller has given up: the gateway
 * answers 503 with Retry-After, and a replica less busy takes the retry.
 */
export const MAX_IN_FLIGHT_DEFAULT = 512;

interface Metric {
  name: string;
  help: string;
}

export interface RequestServerOptions {
  nc: NatsConnection;
  /** Each route with its own request type. */
  routes: Route<never>[];
  log: Logger;
  registry: Registry;
  /** The counter of requests answered and the histogram of their durations, both by `label` (the route's name) and code. */
  metrics: { label: string; total: Metric; duration: Metric };
  errors?: ErrorFormat;
  /** Where replies are kept on Idempotency-Key claims, and the key that seals them; needed when requests carry one. */
  idempotency?: { sql: Sql; encryptionKey: Buffer };
  /** Requests worked on at once (MAX_IN_FLIGHT_DEFAULT unless told); more are answered `errors.unavailable`. */
  maxInFlight?: number;
}

/**
 * Answers NATS requests: subscribes each route's subject in its queue group, decodes the JSON request, drops it past
 * its deadline (the caller has answered already), runs the handler in the caller's trace with the deadline on its
 * transactions (deadline.ts) and, for a keyed request, the mark of its claim on their commits, answers with the RPC
 * `Outcome` header, and keeps the reply on the claim. `stop` stops taking requests and waits for those in flight.
 */
export function serveRequests(opts: RequestServerOptions): Worker {
  const { nc, log } = opts;
  const errors = opts.errors ?? envelopeErrors;
  const label = opts.metrics.label;
  const inFlight = new Set<Promise<void>>();
  const handled = new Counter({
    ...opts.metrics.total,
    labelNames: [label, 'code'],
    registers: [opts.registry],
  });
  const duration = new Histogram({
    ...opts.metrics.duration,
    labelNames: [label, 'code'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [opts.registry],
  });
  const unsendable = encodeJson(errors.internal);
  const busy = encodeJson(errors.unavailable.body);
  const maxInFlight = opts.maxInFlight ?? MAX_IN_FLIGHT_DEFAULT;
  let working = 0;
  const keep = (reqLog: Logger, request: RequestBase, reply: Parameters<typeof keepReply>[3]) =>
    opts.idempotency && request.idempotency
      ? keepReply({ ...opts.idempotency, log: reqLog }, request.idempotency, request, reply)
      : Promise.resolve();

  // Answers completed in one turn of the event loop leave in one socket write (turn-batch.ts). A reply that cannot be
  // sent (larger than the server's max_payload, or the connection closed) must not throw out of here: it would skip
  // the other answers of the turn and end the process. It is logged and becomes the INTERNAL answer when one can be.
  const respondInThisTurn = createTurnBatch(
    (answer: { msg: Msg; data: Uint8Array; headers: MsgHdrs; log: Logger; sent: () => void }) => {
      try {
        answer.msg.respond(answer.data, { headers: answer.headers });
      } catch (err) {
        answer.log.error('reply could not be sent; answering INTERNAL', { err, bytes: answer.data.length });
        try {
          answer.msg.respond(unsendable, { headers: outcomeHeaders('error') });
        } catch (again) {
          answer.log.error('error answer could not be sent either', { err: again });
        }
      }
      answer.sent();
    },
  );

  /** One request, from its message to its answer. Made once, not per message (unnest.ts says why). */
  const handle = async (route: Route<RequestBase>, msg: Msg, started: number): Promise<void> => {
    let request: RequestBase;
    try {
      request = decodeJson<RequestBase>(msg.data);
    } catch {
      log.warn('undecodable rpc request', { [label]: route.name });
      return;
    }
    // The caller has already answered 503: doing the work now would only surprise it later.
    if (Date.now() > request.deadline) {
      handled.inc({ [label]: route.name, code: 'EXPIRED' });
      // Nothing was done: the Idempotency-Key's claim the gateway kept is given up, so that a retry does the work.
      await keep(log, request, { done: false });
      return;
    }
    // The caller's trace continues here (its producer span's context in the headers), when tracing is on.
    const traced = startConsumerSpan(`process ${msg.subject}`, msg.subject, msg.headers);
    if (traced?.span.isRecording()) {
      traced.span.setAttribute('rpc.method', route.name);
      if (request.merchant_id) traced.span.setAttribute('merchant.id', request.merchant_id);
    }
    const reqLog = log.child({
      request_id: request.request_id,
      ...(request.merchant_id ? { merchant_id: request.merchant_id } : {}),
      [label]: route.name,
      ...logFieldsOf(traced?.context),
    });
    let h: MsgHdrs;
    let data: Uint8Array;
    let code: string;
    let final = true;
    try {
      // Its transactions roll back rather than commit past the caller's deadline (deadline.ts), and those of a keyed
      // request mark its claim committed with the work (idempotent-reply.ts): the reply is kept only after the commit.
      const claim = request.idempotency;
      const work = () => route.run(request, reqLog);
      const run = () =>
        withDeadline(
          request.deadline,
          claim ? () => withCommitHook(markCommitted(claim, request.request_id), work) : work,
        );
      const reply = await (traced ? context.with(traced.context, run) : run());
      code = reply.outcome;
      h = outcomeHeaders(reply.outcome);
      if (reply.outcome === 'no_content') data = new Uint8Array(0);
      else if ('contentType' in reply) {
        h.set(RPC_CONTENT_TYPE_HEADER, reply.contentType);
        data = Buffer.from(reply.body, 'utf8');
      } else data = encodeJson(reply.body);
    } catch (err) {
      const refusal = errors.refusal(err, reqLog);
      code = refusal.code;
      final = refusal.final;
      h = outcomeHeaders('error');
      data = encodeJson(refusal.body);
    }
    if (traced) {
      traced.span.setAttribute('rpc.outcome', code);
      if (final) traced.span.end();
      else endWithError(traced.span, code);
    }
    handled.inc({ [label]: route.name, code });
    duration.observe({ [label]: route.name, code }, (performance.now() - started) / 1000);
    // The work counts as in flight until the answer is handed to the client (stop waits for it).
    await new Promise<void>((sent) => respondInThisTurn({ msg, data, headers: h, log: reqLog, sent }));
    await keep(reqLog, request, final ? { done: true, headers: h, data } : { done: false });
  };

  /**
   * A request past `maxInFlight`: answered at once, before it is decoded, and counted. Nothing was done, so an
   * Idempotency-Key's claim it carries is given up, as for one that expired: the retry does the work.
   */
  const refuse = async (route: Route<RequestBase>, msg: Msg): Promise<void> => {
    handled.inc({ [label]: route.name, code: errors.unavailable.code });
    await new Promise<void>((sent) =>
      respondInThisTurn({ msg, data: busy, headers: outcomeHeaders('error'), log, sent }),
    );
    let request: RequestBase;
    try {
      request = decodeJson<RequestBase>(msg.data);
    } catch {
      return;
    }
    await keep(log, request, { done: false });
  };

  const subscriptions: Subscription[] = (opts.routes as Route<RequestBase>[]).map((route) =>
    nc.subscribe(route.subject, {
      queue: route.queue,
      callback: (err, msg) => {
        if (err) {
          log.error('rpc subscription error', { [label]: route.name, err });
          return;
        }
        // Refusals are in flight too (stop waits for their answers) but do not count against the limit.
        const taken = working < maxInFlight;
        const work = taken ? handle(route, msg, performance.now()) : refuse(route, msg);
        if (taken) {
          working++;
          void work.finally(() => working--);
        }
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

function outcomeHeaders(outcome: RpcOutcome): MsgHdrs {
  const h = headers();
  h.set(RPC_OUTCOME_HEADER, outcome);
  return h;
}
