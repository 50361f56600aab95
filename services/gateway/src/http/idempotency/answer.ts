import type { Response } from 'express';
import type { StoredAnswer } from './queries.ts';

/** Headers each answer gets anew from the request that carries it: never stored, never replayed. */
const PER_REQUEST = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'date',
  'x-request-id',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'retry-after',
]);

type End = Response['end'];
type Write = Response['write'];

/**
 * Holds the answer the operation writes until `keep` has dealt with it (stored it or released the key), then sends
 * it unchanged. Kept: the status, the body's bytes, and the headers the operation set (those not on the response
 * when the capture began, and Content-Type), so that a replay carries what matters and not this request's id or
 * rate window.
 */
export function captureAnswer(res: Response, keep: (answer: StoredAnswer) => Promise<void>): void {
  const before = new Set(res.getHeaderNames());
  const chunks: Buffer[] = [];
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    collect(chunks, chunk, rest[0]);
    return write(chunk, ...rest);
  }) as Write;
  res.end = ((...args: unknown[]) => {
    res.write = write as Write;
    res.end = end as End;
    if (typeof args[0] !== 'function') collect(chunks, args[0], args[1]);
    const headers: StoredAnswer['headers'] = {};
    for (const name of res.getHeaderNames()) {
      if (PER_REQUEST.has(name) || (before.has(name) && name !== 'content-type')) continue;
      const value = res.getHeader(name)!;
      headers[name] = Array.isArray(value) ? value : String(value);
    }
    void keep({ status: res.statusCode, headers, body: Buffer.concat(chunks) }).then(() => end(...args));
    return res;
  }) as End;
}

function collect(chunks: Buffer[], chunk: unknown, encoding: unknown): void {
  if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
  if (typeof chunk === 'string')
    chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
  // A copy: the bytes are held until the answer is stored, longer than the buffer they came in may live.
  else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
}

/**
 * Sends a stored answer again: its status, headers and body as they were, with `Idempotent-Replayed: true` and the
 * first request's id in `Original-Request` (as Stripe does). The answer's own request id header (Stripe's
 * `Request-Id` on /v1) names this request.
 */
export function replayAnswer(res: Response, answer: StoredAnswer, originalRequestId: string): void {
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  if ('request-id' in answer.headers) res.setHeader('Request-Id', res.locals['requestId'] as string);
  res.setHeader('Idempotent-Replayed', 'true');
  res.setHeader('Original-Request', originalRequestId);
  res.status(answer.status);
  if (answer.status === 204) return void res.end();
  res.setHeader('Content-Length', String(answer.body.byteLength));
  res.end(answer.body);
}
