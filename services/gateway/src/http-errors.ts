import type { Response } from 'express';
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
