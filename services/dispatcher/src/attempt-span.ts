import {
  SpanKind,
  SpanStatusCode,
  tracer,
  tracingEnabled,
  isSampled,
  type Context,
  type Span,
} from '@platform/shared/tracing/context';

/** What an attempt's span needs: the context it belongs to (its event's, or none), the endpoint, the attempt. */
export interface AttemptTrace {
  parent: Context;
  endpointId: string;
  attempt: number;
}

/**
 * The client span of one webhook POST, when tracing is on and the trace it belongs to is sampled: the endpoint id, the attempt number and the receiver's
 * host, never the URL's path or query (a receiver may put a token there), the secret, the signature or the body.
 * The request itself carries no trace header: a receiver is another party.
 */
export function startAttemptSpan(trace: AttemptTrace | undefined, url: URL): Span | null {
  if (!trace || !tracingEnabled() || !isSampled(trace.parent)) return null;
  return tracer.startSpan(
    'webhook POST',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': 'POST',
        'server.address': url.hostname,
        'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
        'webhook.endpoint.id': trace.endpointId,
        'webhook.attempt': trace.attempt,
      },
    },
    trace.parent,
  );
}

/** Ends the span with the attempt's status code, or with its error's short description (send.ts describeError). */
export function endAttemptSpan(span: Span, statusCode: number | null, error: string | null): void {
  if (statusCode !== null) span.setAttribute('http.response.status_code', statusCode);
  if (error !== null) span.setAttribute('error.type', error);
  if (statusCode === null || statusCode >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
