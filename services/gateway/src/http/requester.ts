import type { MsgHdrs } from '@nats-io/nats-core';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { natsInbox } from '@platform/shared/nats';
import {
  context,
  endWithError,
  trace,
  tracingEnabled,
  type Context,
  type Span,
} from '@platform/shared/tracing/context';
import { startProducerSpan } from '@platform/shared/tracing/nats';
import { createTurnBatch } from '@platform/shared/turn-batch';

export type RequestOutcome =
  { kind: 'reply'; msg: Msg } | { kind: 'no_responders' } | { kind: 'timeout' } | { kind: 'closed' };

interface Pending {
  settle(outcome: RequestOutcome): void;
  deadline: number;
  subject: string;
  payload: Uint8Array;
  /** With tracing on: the request's trace context (traceparent, tracestate). */
  headers: MsgHdrs | undefined;
}

/** Ends a request's producer span with its outcome: anything but a reply is an error. */
function endRequestSpan(span: Span, outcome: RequestOutcome): void {
  if (outcome.kind === 'reply') span.end();
  else endWithError(span, outcome.kind);
}

/** How often deadlines are checked: a request times out at most this much after its deadline. */
const DEADLINE_CHECK_MS = 20;

/**
 * Request/reply for the gateway's hot path: one subscription to a wildcard inbox for every reply, a map of the
 * requests waiting, and one timer that expires them, instead of the client's per-request bookkeeping (a timer and an
 * Error with a captured stack for every request, even a successful one). Requests made in one turn of the event loop
 * are published together, so they leave in one socket write.
 *
 * Outcomes are values, not exceptions: the gateway turns every failure into 503 UNAVAILABLE without looking further.
 */
export function createRequester(nc: NatsConnection) {
  const inbox = natsInbox(nc);
  const pending = new Map<string, Pending>();
  let next = 0;

  const subscription = nc.subscribe(`${inbox}.*`, {
    callback: (err, msg) => {
      if (err) {
        // The subscription ended (connection closed or drained): nothing more will answer.
        for (const p of pending.values()) p.settle({ kind: 'closed' });
        pending.clear();
        return;
      }
      const token = msg.subject.slice(inbox.length + 1);
      const waiting = pending.get(token);
      if (!waiting) return; // answered after its deadline
      pending.delete(token);
      // The server answers a request nobody subscribes to with an empty 503 status message.
      if (msg.data.length === 0 && msg.headers?.code === 503) waiting.settle({ kind: 'no_responders' });
      else waiting.settle({ kind: 'reply', msg });
    },
  });

  const publishInThisTurn = createTurnBatch((token: string) => {
    const p = pending.get(token);
    if (!p) return;
    try {
      nc.publish(p.subject, p.payload, { reply: `${inbox}.${token}`, ...(p.headers ? { headers: p.headers } : {}) });
    } catch {
      // Closed or draining between the call and this turn's end.
      pending.delete(token);
      p.settle({ kind: 'closed' });
    }
  });

  const expiry = setInterval(() => {
    const now = Date.now();
    for (const [token, p] of pending) {
      if (p.deadline <= now) {
        pending.delete(token);
        p.settle({ kind: 'timeout' });
      }
    }
  }, DEADLINE_CHECK_MS);
  expiry.unref();

  return {
    /** `parent`: the trace context to continue (the active one when not given); none without a span in it. */
    request(subject: string, payload: Uint8Array, timeoutMs: number, parent?: Context): Promise<RequestOutcome> {
      if (nc.isClosed()) return Promise.resolve({ kind: 'closed' });
      const token = (next++).toString(36);
      // With tracing on, a producer span in the caller's context (the HTTP request's), ended with the answer.
      const traceContext = tracingEnabled() ? (parent ?? context.active()) : undefined;
      const traced = traceContext && trace.getSpan(traceContext) ? startProducerSpan(subject, traceContext) : null;
      return new Promise<RequestOutcome>((settle) => {
        pending.set(token, {
          settle: traced
            ? (outcome) => {
                endRequestSpan(traced.span, outcome);
                settle(outcome);
              }
            : settle,
          deadline: Date.now() + timeoutMs,
          subject,
          payload,
          headers: traced?.headers,
        });
        publishInThisTurn(token);
      });
    },
    close() {
      clearInterval(expiry);
      subscription.unsubscribe();
      for (const p of pending.values()) p.settle({ kind: 'closed' });
      pending.clear();
    },
  };
}

export type Requester = ReturnType<typeof createRequester>;
