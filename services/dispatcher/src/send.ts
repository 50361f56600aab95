import { errors as undiciErrors, type Dispatcher } from 'undici';
import { parseRetryAfter, WEBHOOK_RESPONSE_BODY_BYTES } from '@platform/shared/webhooks';
import type { AttemptOutcome } from './domain/verdict.ts';
import { RefusedAddressError } from './domain/addresses.ts';
import { endAttemptSpan, startAttemptSpan, type AttemptTrace } from './attempt-span.ts';
import type { Span } from '@platform/shared/tracing/context';

const USER_AGENT = 'AffiliatePlatform-Webhooks/1.0';

/** Why an attempt's request was aborted by us (never shown: the outcome says what happened). */
class AttemptEnded extends Error {}

/**
 * One POST of a signed webhook. Never throws: a timeout, a refused address or a network error is an outcome like
 * a status code. Redirects are not followed (a 3xx is retried like a 5xx). Only the first KiB of the response is
 * read and kept; the rest is discarded with the connection.
 *
 * Straight on the dispatcher's handler interface rather than through undici's `request`: that wraps every response
 * in a stream, a promise chain and an AbortSignal with a timer of its own, which cost the dispatcher more CPU than
 * the HTTP exchange itself when a receiver answers at once. One timer bounds the whole attempt; once the status has
 * arrived it decides the outcome, whatever then happens to the body.
 */
export function postWebhook(opts: {
  dispatcher: Dispatcher;
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** With tracing on: what the attempt's client span needs (attempt-span.ts). */
  trace?: AttemptTrace;
}): Promise<AttemptOutcome> {
  const attemptedAt = new Date();
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    let controller: Dispatcher.DispatchController | null = null;
    let statusCode: number | null = null;
    let retryAfter: string | undefined;
    const kept: Buffer[] = [];
    let size = 0;
    let span: Span | null = null;
    const settle = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (span) endAttemptSpan(span, outcome.statusCode, outcome.error);
      resolve(outcome);
    };
    const answered = () =>
      settle({
        attemptedAt,
        statusCode,
        error: null,
        durationMs: elapsed(),
        responseBody: textOf(kept.length === 1 ? kept[0]! : Buffer.concat(kept)),
        retryAfterMs: parseRetryAfter(retryAfter),
      });
    const failed = (error: string) =>
      settle({ attemptedAt, statusCode: null, error, durationMs: elapsed(), responseBody: '', retryAfterMs: null });
    const end = (outcome: () => void) => {
      outcome();
      // Aborting discards the connection: whatever the receiver still sends is not read.
      if (controller && !controller.aborted) controller.abort(new AttemptEnded('attempt over'));
    };
    const timer = setTimeout(() => end(() => (statusCode === null ? failed('timeout') : answered())), opts.timeoutMs);
    try {
      const url = new URL(opts.url);
      span = startAttemptSpan(opts.trace, url);
      opts.dispatcher.dispatch(
        {
          origin: url.origin,
          path: url.pathname + url.search,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...opts.headers },
          body: opts.body,
          headersTimeout: opts.timeoutMs,
          bodyTimeout: opts.timeoutMs,
        },
        {
          onRequestStart(c) {
            controller = c;
            // Timed out while connecting: the request must not go out now.
            if (settled) c.abort(new AttemptEnded('attempt over'));
          },
          onResponseStart(_c, code, headers) {
            if (code < 200) return; // informational: the final status follows
            statusCode = code;
            const value = headers['retry-after'];
            retryAfter = Array.isArray(value) ? value[0] : value;
          },
          onResponseData(_c, chunk) {
            if (size >= WEBHOOK_RESPONSE_BODY_BYTES) return;
            kept.push(
              size + chunk.length > WEBHOOK_RESPONSE_BODY_BYTES
                ? chunk.subarray(0, WEBHOOK_RESPONSE_BODY_BYTES - size)
                : chunk,
            );
            size += chunk.length;
            if (size >= WEBHOOK_RESPONSE_BODY_BYTES) end(answered);
          },
          onResponseEnd() {
            answered();
          },
          onResponseError(_c, err) {
            // A body cut short or too slow: the status code already decides the outcome.
            if (statusCode !== null) answered();
            else failed(describeError(err));
          },
        },
      );
    } catch (err) {
      failed(describeError(err));
    }
  });
}

/** Postgres text holds no NUL; a multi-byte character cut at the KiB boundary becomes U+FFFD. */
function textOf(bytes: Buffer): string {
  return bytes.toString('utf8').replaceAll('\u0000', '');
}

/** A short, stable description for the delivery log: no stack, nothing from the request. */
function describeError(err: unknown): string {
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
  if (code && known[code]) return known[code];
  if (code && /^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_SSL)/.test(code)) return `TLS error: ${code}`;
  return `network error${code ? `: ${code}` : ''}`.slice(0, 200);
}
