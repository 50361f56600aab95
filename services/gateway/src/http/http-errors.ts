import { maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import type { Response } from 'express';
import { newId } from '@platform/shared/ids';
import { ApiError, type ErrorCode, type ErrorDetail } from '@platform/shared/errors';
import type { Logger } from '@platform/shared/log';
import { lingeringClose } from './body-guard.ts';

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
export function sendServiceError(
  res: Response,
  error: { code: string; message: string; details?: ErrorDetail[] },
): void {
  const code = (error.code in HTTP_STATUS ? error.code : 'INTERNAL') as ErrorCode;
  sendError(res, code, error.message, error.details ? { details: error.details } : {});
}

/** Connections answered here and closing: the parser reports the same error again for the bytes read meanwhile. */
const refusedConnections = new WeakSet<Socket>();

/**
 * A connection whose request Node's parser gave up on, answered with the error envelope like any other refusal: too
 * slow (headersTimeout, requestTimeout: 408), a request line or headers over Node's limit (414 when the request line
 * itself did not end within it, else 431), or malformed (a NUL in a header, Transfer-Encoding with Content-Length,
 * not HTTP: 400). Answered only when nothing has been written on the connection yet, then closed once the client has
 * stopped sending (lingeringClose), so that the answer arrives whole.
 */
export function answerClientError(err: Error & { code?: string; rawPacket?: Buffer }, socket: Socket): void {
  if (refusedConnections.has(socket)) return;
  if (socket.writable && socket.bytesWritten === 0 && err.code !== 'ECONNRESET') {
    refusedConnections.add(socket);
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
      socket.write(rawErrorAnswer(408, 'Request Timeout', 'The request was not received in time'));
    else if (err.code === 'HPE_HEADER_OVERFLOW' && requestLineOverflowed(err.rawPacket)) {
      socket.write(rawErrorAnswer(414, 'URI Too Long', 'The request URL is too long'));
    } else if (err.code === 'HPE_HEADER_OVERFLOW')
      socket.write(rawErrorAnswer(431, 'Request Header Fields Too Large', 'The request headers are too large'));
    else socket.write(rawErrorAnswer(400, 'Bad Request', 'The request is not valid HTTP'));
    return lingeringClose(socket);
  }
  socket.destroy();
}

/** Whether the request line alone was over Node's limit (the packet the parser failed on, as far as it holds it). */
function requestLineOverflowed(packet: Buffer | undefined): boolean {
  if (!packet) return false;
  const lineEnd = packet.indexOf('\r\n');
  return lineEnd === -1 || lineEnd > maxHeaderSize;
}

/** A whole HTTP response with the error envelope, written straight to a socket that express never saw. */
function rawErrorAnswer(status: number, reason: string, message: string): string {
  const requestId = newId('req');
  const body = JSON.stringify({ error: { code: 'INVALID_INPUT', message, request_id: requestId } });
  return [
    `HTTP/1.1 ${status} ${reason}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * A route handler's failure on a JSON surface (/dashboard/api, /portal/api): an ApiError as its envelope, anything
 * else logged with the route's name and answered INTERNAL.
 */
export function sendRouteFailure(res: Response, log: Logger, surface: string, route: string, err: unknown): void {
  if (err instanceof ApiError)
    return sendError(res, err.code, err.message, err.details ? { details: err.details } : {});
  log.error(`${surface} route failed`, { err: err as Error, route, request_id: res.locals['requestId'] });
  sendError(res, 'INTERNAL', 'Something went wrong on our side');
}
