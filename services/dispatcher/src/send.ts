import { errors as undiciErrors, request, type Dispatcher } from 'undici';
import { parseRetryAfter, WEBHOOK_RESPONSE_BODY_BYTES } from '@platform/shared/webhooks';
import type { AttemptOutcome } from './queries/deliveries.ts';
import { RefusedAddressError } from './ssrf.ts';

const USER_AGENT = 'AffiliatePlatform-Webhooks/1.0';

/**
 * One POST of a signed webhook. Never throws: a timeout, a refused address or a network error is an outcome like
 * a status code. Redirects are not followed (a 3xx is retried like a 5xx). Only the first KiB of the response is
 * read and kept; the rest is discarded with the connection.
 */
export async function postWebhook(opts: {
  dispatcher: Dispatcher;
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}): Promise<AttemptOutcome> {
  const attemptedAt = new Date();
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const signal = AbortSignal.timeout(opts.timeoutMs);
  try {
    const res = await request(opts.url, {
      method: 'POST',
      dispatcher: opts.dispatcher,
      headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...opts.headers },
      body: opts.body,
      signal,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
    const retryAfter = res.headers['retry-after'];
    const kept: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        const buf = chunk as Buffer;
        kept.push(buf);
        size += buf.length;
        if (size >= WEBHOOK_RESPONSE_BODY_BYTES) break; // leaving the loop destroys the stream
      }
    } catch {
      // A body cut short or too slow: the status code already decides the outcome.
    }
    return {
      attemptedAt,
      statusCode: res.statusCode,
      error: null,
      durationMs: elapsed(),
      responseBody: textOf(Buffer.concat(kept).subarray(0, WEBHOOK_RESPONSE_BODY_BYTES)),
      retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter),
    };
  } catch (err) {
    return { attemptedAt, statusCode: null, error: describeError(err, signal), durationMs: elapsed(), responseBody: '', retryAfterMs: null };
  }
}

/** Postgres text holds no NUL; a multi-byte character cut at the KiB boundary becomes U+FFFD. */
function textOf(bytes: Buffer): string {
  return bytes.toString('utf8').replace(/\u0000/g, '');
}

/** A short, stable description for the delivery log: no stack, nothing from the request. */
function describeError(err: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'timeout';
  if (err instanceof RefusedAddressError) return `refused: ${err.message}`;
  if (err instanceof undiciErrors.ConnectTimeoutError) return 'connect timeout';
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) return 'timeout';
  const e = err as { code?: string; cause?: { code?: string; message?: string }; message?: string };
  if (e.cause instanceof RefusedAddressError) return `refused: ${e.cause.message}`;
  const code = e.code && e.code !== 'UND_ERR_SOCKET' ? e.code : e.cause?.code;
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'DNS lookup failed',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    UND_ERR_SOCKET: 'connection closed',
  };
  if (code && known[code]) return known[code]!;
  if (code && /^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_SSL)/.test(code)) return `TLS error: ${code}`;
  return `network error${code ? `: ${code}` : ''}`.slice(0, 200);
}
