import { headers as natsHeaders, type MsgHdrs } from '@nats-io/nats-core';
import {
  carrierOfSpanContext,
  contextOfCarrier,
  inBatchSpan,
  ROOT_CONTEXT,
  SpanKind,
  trace,
  tracer,
  tracingEnabled,
  unsampledSpanOf,
  type Context,
  type Span,
  type TraceCarrier,
} from './context.ts';

/**
 * W3C Trace Context over NATS. No instrumentation of the NATS client exists, so each hop does it here: the
 * sender starts a producer span and carries it in the message's `traceparent` / `tracestate` headers (request/reply
 * and JetStream publishes alike); the receiver continues it with a consumer span, or, for a batch of many
 * messages, with one span linked to each message's context. With tracing off nothing is added to any message.
 */

const TRACEPARENT = 'traceparent';
const TRACESTATE = 'tracestate';

/** Sets the carrier's headers on `h` (made when absent); answers the headers. */
export function setTraceHeaders(h: MsgHdrs | undefined, carrier: TraceCarrier): MsgHdrs {
  const out = h ?? natsHeaders();
  out.set(TRACEPARENT, carrier.traceparent);
  if (carrier.tracestate) out.set(TRACESTATE, carrier.tracestate);
  return out;
}

/** The context a message's headers carry as a remote parent (the root context when they carry none). */
export function contextOfHeaders(h: MsgHdrs | undefined): Context {
  if (!h) return ROOT_CONTEXT;
  const traceparent = h.get(TRACEPARENT);
  if (!traceparent) return ROOT_CONTEXT;
  return contextOfCarrier({ traceparent, tracestate: h.get(TRACESTATE) || undefined });
}

const messagingAttributes = (subject: string, operation: 'send' | 'process') => ({
  'messaging.system': 'nats',
  'messaging.destination.name': subject,
  'messaging.operation.type': operation,
});

/**
 * A producer span for one message to `subject`, child of `parent`, with its headers set on `h` (made when absent).
 * Null, and `h` untouched, when tracing is off. The caller ends the span once the message is sent (or answered).
 * Under a trace that is not sampled, no span is made: the parent's own (recording nothing) is answered, and its
 * context is what the headers carry.
 */
export function startProducerSpan(
  subject: string,
  parent: Context,
  h?: MsgHdrs,
  messageId?: string,
): { span: Span; headers: MsgHdrs } | null {
  if (!tracingEnabled()) return null;
  const unsampled = unsampledSpanOf(parent);
  if (unsampled) {
    const carrier = carrierOfSpanContext(unsampled.spanContext());
    return { span: unsampled, headers: carrier ? setTraceHeaders(h, carrier) : (h ?? natsHeaders()) };
  }
  const span = tracer.startSpan(
    `send ${subject}`,
    {
      kind: SpanKind.PRODUCER,
      attributes: {
        ...messagingAttributes(subject, 'send'),
        ...(messageId ? { 'messaging.message.id': messageId } : {}),
      },
    },
    parent,
  );
  const carrier = carrierOfSpanContext(span.spanContext());
  return { span, headers: carrier ? setTraceHeaders(h, carrier) : (h ?? natsHeaders()) };
}

/**
 * A consumer span for one received message, child of the context its headers carry; answers the span and the
 * context to run the message's work in. Null when tracing is off or the message carries no trace. Under a trace
 * that is not sampled, the remote parent itself (no span is made).
 */
export function startConsumerSpan(
  name: string,
  subject: string,
  h: MsgHdrs | undefined,
): { span: Span; context: Context } | null {
  if (!tracingEnabled()) return null;
  const parent = contextOfHeaders(h);
  // Traces start at the gateway: a message that carries none starts none here.
  if (parent === ROOT_CONTEXT) return null;
  const unsampled = unsampledSpanOf(parent);
  if (unsampled) return { span: unsampled, context: parent };
  const span = tracer.startSpan(
    name,
    { kind: SpanKind.CONSUMER, attributes: messagingAttributes(subject, 'process') },
    parent,
  );
  return { span, context: trace.setSpan(parent, span) };
}

/**
 * Runs the work of a batch of received messages in a consumer span: the child of the first message's context whose
 * trace is sampled, linked to the others' (context.ts inBatchSpan).
 */
export function inConsumerBatchSpan<T>(
  name: string,
  messages: readonly { subject: string; headers?: MsgHdrs }[],
  work: () => Promise<T>,
): Promise<T> {
  if (!tracingEnabled()) return work();
  const parents = new Array<Context>(messages.length);
  for (let i = 0; i < messages.length; i++) parents[i] = contextOfHeaders(messages[i]!.headers);
  const subject = messages.length === 1 ? messages[0]!.subject : name;
  return inBatchSpan(
    `process ${subject}`,
    parents,
    () => ({ ...messagingAttributes(subject, 'process'), 'messaging.batch.message_count': messages.length }),
    work,
    SpanKind.CONSUMER,
  );
}

/**
 * The headers of a message published for a stored trace context (an outbox row's): with tracing on, a producer
 * span, child of that context, added to `spans` for the caller to end once the message is acknowledged; with
 * tracing off in this process, the stored context as it is, so the trace still continues downstream. Undefined
 * when the row has none.
 */
export function storedContextHeaders(
  subject: string,
  carrier: TraceCarrier | null,
  messageId: string,
  spans: Span[],
): MsgHdrs | undefined {
  if (!carrier) return undefined;
  const produced = startProducerSpan(subject, contextOfCarrier(carrier), undefined, messageId);
  if (!produced) return setTraceHeaders(undefined, carrier);
  if (produced.span.isRecording()) spans.push(produced.span);
  return produced.headers;
}
