import { context, runInSpan, SpanKind, trace, tracer, tracingEnabled, type Context } from './context.ts';

/**
 * A client span for a Postgres statement or transaction of a hot path, named by what it does ("insert
 * conversion_events", "process conversions"): never its text's parameters, which the driver knows and this does
 * not. postgres.js has no instrumentation of its own. Only under a recording span (the request or message the work
 * serves, `parent` or else the active context): background polls start no traces of their own.
 */
export function inDatabaseSpan<T>(name: string, work: () => Promise<T>, parent?: Context): Promise<T> {
  if (!tracingEnabled()) return work();
  const ctx = parent ?? context.active();
  if (!trace.getSpan(ctx)?.isRecording()) return work();
  const span = tracer.startSpan(
    name,
    { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'postgresql', 'db.query.summary': name } },
    ctx,
  );
  return runInSpan(span, ctx, work);
}
