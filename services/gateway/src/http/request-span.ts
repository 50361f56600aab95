import type { NextFunction, Request, Response } from 'express';
import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  tracer,
  tracingEnabled,
  type Context,
  type Span,
} from '@platform/shared/tracing/context';

/**
 * The gateway's server span of a request, when tracing is on. It starts a trace of its own: a client's
 * traceparent is not followed, so that no caller chooses what the platform samples. The API's operations take its
 * context from `requestContext` (the body parser's callbacks run in the socket's context) and pass it on, sampled
 * or not. A sampled request also runs the middleware after this one in its context (the key lookup, the rate
 * count), with its listeners bound to it so that every route's later work joins its trace; one that is not sampled
 * is spared that (binding allocates per listener). Ended when the response is done, with the route template, the
 * status and the merchant (from the key: never the key, a query or a body).
 */
export function traceRequest(req: Request, res: Response, requestId: string, next: NextFunction): void {
  if (!tracingEnabled()) return next();
  const span = tracer.startSpan(req.method, { kind: SpanKind.SERVER }, ROOT_CONTEXT);
  const ctx = trace.setSpan(ROOT_CONTEXT, span);
  res.locals['traceContext'] = ctx;
  // A request that is not sampled only hands its context to the API's operations (they pass the decision on);
  // nothing else under it would record anything.
  if (!span.isRecording()) return next();
  span.setAttributes({ 'http.request.method': req.method, 'request.id': requestId, 'url.scheme': req.protocol });
  res.once('close', () => endRequestSpan(span, req, res));
  context.bind(ctx, req);
  context.with(ctx, next);
}

/** The context of the request's server span; undefined when tracing is off. */
export const requestContext = (res: Response): Context | undefined => res.locals['traceContext'] as Context | undefined;

function endRequestSpan(span: Span, req: Request, res: Response): void {
  // Express's template of the matched route (':id'), written as the API's paths are ('{id}').
  const route = req.route ? `${req.baseUrl}${String((req.route as { path: string }).path)}` : null;
  const template = route?.replace(/:([A-Za-z_]+)/g, '{$1}');
  if (template) {
    span.updateName(`${req.method} ${template}`);
    span.setAttribute('http.route', template);
  }
  span.setAttribute('http.response.status_code', res.statusCode);
  const merchantId = (res.locals['key'] as { merchantId?: string } | undefined)?.merchantId;
  if (merchantId) span.setAttribute('merchant.id', merchantId);
  if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  if (!res.writableFinished) span.setAttribute('error.type', 'aborted');
  span.end();
}
