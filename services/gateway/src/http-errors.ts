import type { Socket } from 'node:net';
import type { Response } from 'express';
import { newId } from '@platform/shared/ids';
import type { ErrorCode, ErrorDetail } from '@platform/shared/errors';

/** The only place error codes become HTTP statuses. */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  PLAN_REQUIRED: 402,
  RATE_LIMITED: 429,
  INVALID_INPUT: 400,
  NOT_FOUND: 404,
  CONFLICT: 409,
  INTERNAL: 500,
  UNAVAILABLE: 503,
};

export function sendError(
  res: Response,
  code: ErrorCode,
  message: string,
  opts: { details?: ErrorDetail[]; status?: number } = {},
): void {
  const status = opts.status ?? HTTP_STATUS[code];
  if (code === 'UNAUTHORIZED') res.setHeader('WWW-Authenticate', 'Bearer realm="api"');
  if (code === 'UNAVAILABLE' && !res.hasHeader('Retry-After')) res.setHeader('Retry-After', '1');
  res.status(status).json({
    error: {
      code,
      message,
      request_id: res.locals['requestId'] as string,
      ...(opts.details ? { details: opts.details } : {}),
    },
  });
}

/** Error bodies from a service arrive as JSON text: the request id is added here, where it is known. */
export function sendServiceError(res: Response, error: { code: string; message: string; details?: ErrorDetail[] }): void {
  const code = (error.code in HTTP_STATUS ? error.code : 'INTERNAL') as ErrorCode;
  sendError(res, code, error.message, error.details ? { details: error.details } : {});
}

/**
 * A connection whose request Node's parser gave up on: too slow (headersTimeout, requestTimeout: 408 with the error
 * envelope), or malformed (Node's own 400 and 431 answers, as without this handler). Answered only when nothing has
 * been written on the connection yet, then closed.
 */
export function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  if (socket.writable && socket.bytesWritten === 0) {
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') socket.write(requestTimeoutAnswer());
    else if (err.code === 'HPE_HEADER_OVERFLOW') socket.write('HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n');
    else if (err.code !== 'ECONNRESET') socket.write('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  }
  socket.destroy();
}

function requestTimeoutAnswer(): string {
  const requestId = newId('req');
  const body = JSON.stringify({ error: { code: 'INVALID_INPUT', message: 'The request was not received in time', request_id: requestId } });
  return [
    'HTTP/1.1 408 Request Timeout',
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}
