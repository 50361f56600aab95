import type { Response } from 'express';
import type { StripeErrorBody } from '@platform/shared/payments/errors';

export type { StripeErrorBody } from '@platform/shared/payments/errors';

/**
 * Answers a /v1 request with Stripe's error shape, `{error: {type, code, message, param}}`, and its status. The
 * request id goes in `Request-Id` as Stripe sends it (the SDKs read it from there) besides our X-Request-Id.
 */
export function sendStripeError(res: Response, status: number, error: StripeErrorBody): void {
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="Stripe"');
  if (status === 503 && !res.hasHeader('Retry-After')) res.setHeader('Retry-After', '1');
  res.setHeader('Request-Id', res.locals['requestId'] as string);
  res.status(status).json({ error });
}

/** The same key reused with another body, or while its first request is still running: `idempotency_error`. */
export const sendIdempotencyError = (res: Response, message: string, status = 400): void =>
  sendStripeError(res, status, { type: 'idempotency_error', message });
