import {
  context,
  createTraceState,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
} from '@opentelemetry/api';

/**
 * Tracing as every module but the entry points sees it: the OpenTelemetry API only. The SDK is loaded by
 * start.ts, from a service's entry point, when an OTLP endpoint is configured; until then (and in a process that
 * never starts it) `tracingEnabled()` is false and every helper here returns before it allocates anything, so
 * the hot paths pay one boolean test.
 */
let enabled = false;

export const tracingEnabled = (): boolean => enabled;

/** Called once the SDK's tracer provider is registered (start.ts). */
export function markTracingEnabled(): void {
  enabled = true;
}

/** The platform's tracer; the API's proxy, which delegates to the SDK's provider once one is registered. */
export const tracer = trace.getTracer('affiliate-platform');

/** A span context in W3C Trace Context form, as carried in NATS headers and kept in outbox rows. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-|$)/;

/** The W3C carrier of a span context, or null when it is not valid. */
export function carrierOfSpanContext(sc: SpanContext): TraceCarrier | null {
  if (!isSpanContextValid(sc)) return null;
  const flags = (sc.traceFlags & 0xff).toString(16).padStart(2, '0');
  const carrier: TraceCarrier = { traceparent: `00-${sc.traceId}-${sc.spanId}-${flags}` };
  const state = sc.traceState?.serialize();
  if (state) carrier.tracestate = state;
  return carrier;
}

/** Whether the trace of the span in `ctx` is sampled (recorded). */
export const isSampled = (ctx: Context): boolean =>
  ((trace.getSpanContext(ctx)?.traceFlags ?? 0) & TraceFlags.SAMPLED) !== 0;

/**
 * The W3C carrier of the span in `ctx` (the active context by default) when its trace is sampled: what an outbox
 * row or a webhook message keeps for the hops that come later, which continue it. A trace that records nothing
 * leaves nothing to keep (and those hops, finding none, record nothing either). Null when tracing is off.
 */
export function carrierOf(ctx?: Context): TraceCarrier | null {
  if (!enabled) return null;
  const sc = trace.getSpanContext(ctx ?? context.active());
  return sc && sc.traceFlags & TraceFlags.SAMPLED ? carrierOfSpanContext(sc) : null;
}

/** A carrier as JSON text, as the outbox's and webhook_messages' trace_context columns take it; null without one. */
export const carrierJson = (carrier: TraceCarrier | null): string | null => (carrier ? JSON.stringify(carrier) : null);

/** The remote span context a W3C carrier names, or null for a missing or malformed one (never an error). */
export function spanContextOf(traceparent: unknown, tracestate?: unknown): SpanContext | null {
  if (typeof traceparent !== 'string') return null;
  const m = TRACEPARENT.exec(traceparent.trim().toLowerCase());
  // Version ff is invalid; version 00 has exactly four fields.
  if (!m || m[1] === 'ff' || (m[1] === '00' && traceparent.trim().length !== 55)) return null;
  const sc: SpanContext = { traceId: m[2]!, spanId: m[3]!, traceFlags: parseInt(m[4]!, 16) & 1, isRemote: true };
  if (!isSpanContextValid(sc)) return null;
  if (typeof tracestate === 'string' && tracestate.length > 0 && tracestate.length <= 512)
    sc.traceState = createTraceState(tracestate);
  return sc;
}

/** `base` (the root context by default) with the carrier's span as its remote parent; `base` when there is none. */
export function contextOfCarrier(carrier: Partial<TraceCarrier> | null | undefined, base = ROOT_CONTEXT): Context {
  const sc = carrier ? spanContextOf(carrier.traceparent, carrier.tracestate) : null;
  return sc ? trace.setSpanContext(base, sc) : base;
}

/** trace_id and span_id of the recording or remote span in `ctx`, for log lines; null when there is none. */
export function logFieldsOf(ctx?: Context): { trace_id: string; span_id: string } | null {
  if (!enabled) return null;
  const span = trace.getSpan(ctx ?? context.active());
  if (!span) return null;
  const sc = span.spanContext();
  return isSpanContextValid(sc) ? { trace_id: sc.traceId, span_id: sc.spanId } : null;
}

/**
 * The span in `ctx` when its trace is not sampled (a decision every later hop follows: the samplers offered decide
 * by the parent, or by the trace id alike). Work under it starts no span of its own, which would cost ids and
 * allocations to record nothing: it runs in that context, and passes it on as it is.
 */
export function unsampledSpanOf(ctx: Context): Span | undefined {
  const span = trace.getSpan(ctx);
  if (!span) return undefined;
  const sc = span.spanContext();
  return (sc.traceFlags & TraceFlags.SAMPLED) === 0 && isSpanContextValid(sc) ? span : undefined;
}

/**
 * Ends `span` with an error status naming the error's code or class, or the given code (never an error's message:
 * drivers put parameters there).
 */
export function endWithError(span: Span, err: unknown): void {
  const type =
    typeof err === 'string' ? err : err instanceof Error ? ((err as { code?: string }).code ?? err.name) : 'error';
  span.setAttribute('error.type', String(type));
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/**
 * Runs `work` for what it serves (`parents`: the contexts of the requests or messages of a batch) in a span of its
 * own, ended when `work` settles: the child of the first of them whose trace is sampled, with a link to each of the
 * others, so that every one of them leads to the batch. When none is sampled (or none has a trace), no span is
 * made: the work runs in the first one's context, which it passes on as it is. Without tracing, `work` alone.
 */
export function inBatchSpan<T>(
  name: string,
  parents: readonly Context[],
  attributes: () => Attributes,
  work: () => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  if (!enabled) return work();
  let parent: Context | undefined;
  for (const p of parents) {
    if (isSampled(p)) {
      parent = p;
      break;
    }
  }
  if (!parent) return context.with(parents[0] ?? ROOT_CONTEXT, work);
  let links: Link[] | undefined;
  if (parents.length > 1) {
    links = [];
    for (const p of parents) {
      const sc = p === parent ? undefined : trace.getSpanContext(p);
      if (sc && isSpanContextValid(sc)) links.push({ context: sc });
    }
  }
  const span = tracer.startSpan(name, { kind, attributes: attributes(), links }, parent);
  return runInSpan(span, parent, work);
}

/** Runs `work` with `span` active (as a child of `parent`), ending the span when it settles. */
export function runInSpan<T>(span: Span, parent: Context, work: () => Promise<T>): Promise<T> {
  let pending: Promise<T>;
  try {
    pending = context.with(trace.setSpan(parent, span), work);
  } catch (err) {
    endWithError(span, err);
    throw err;
  }
  return pending.then(
    (value) => {
      span.end();
      return value;
    },
    (err: unknown) => {
      endWithError(span, err);
      throw err;
    },
  );
}

export { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span };

/** Ends every span, with an error status when the work they cover failed. */
export function endSpans(spans: readonly Span[], err?: unknown): void {
  for (const span of spans) {
    if (err === undefined) span.end();
    else endWithError(span, err);
  }
}
