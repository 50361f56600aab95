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
 * traceparent is not followed, so that no caller chooses what the platform samples. The middleware after this one
 * runs in its context (the key lookup and the rate count), and the API's operations take it from `requestContext`
 * after the body has been read (the body parser's callbacks run in the socket's context). A sampled request's
 * listeners are bound to it too, so that every route's later work joins its trace; binding costs an allocation per
 * listener, which a request that records nothing is spared. Ended when the response is done, with the route
 * template, the status and the merchant (from the key: never the key, a query or a body).
 */
export function traceRequest(req: Request, res: Response, requestId: string, next: NextFunction): void {
  if (!tracingEnabled()) return next();
  const span = tracer.startSpan(req.method, { kind: SpanKind.SERVER }, ROOT_CONTEXT);
  // Attributes only for a span that records them (the sampler decides on the trace id alone).
  if (span.isRecording())
    span.setAttributes({ 'http.request.method': req.method, 'request.id': requestId, 'url.scheme': req.protocol });
  const ctx = trace.setSpan(ROOT_CONTEXT, span);
  res.locals['traceContext'] = ctx;
  res.once('close', () => endRequestSpan(span, req, res));
  if (span.isRecording()) context.bind(ctx, req);
  context.with(ctx, next);
}

/** The context of the request's server span; undefined when tracing is off. */
export const requestContext = (res: Response): Context | undefined => res.locals['traceContext'] as Context | undefined;

function endRequestSpan(span: Span, req: Request, res: Response): void {
  if (!span.isRecording()) return;
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
