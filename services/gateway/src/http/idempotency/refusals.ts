import { sendError } from '../http-errors.ts';
import { sendIdempotencyError, sendStripeError } from '../../surfaces/v1/errors.ts';
import type { IdempotencyRefusals } from './middleware.ts';

/** /api/v1: the error envelope; a reused key is 409 CONFLICT, as a reused external_id is. */
export const apiRefusals: IdempotencyRefusals = {
  invalidKey: (res, problem) =>
    sendError(res, 'INVALID_INPUT', 'The request is invalid', {
      details: [{ path: 'Idempotency-Key', message: problem }],
    }),
  mismatch: (res) =>
    sendError(
      res,
      'CONFLICT',
      'This Idempotency-Key was used with another request (method, path or body); use a new key for a new request',
    ),
  inProgress: (res) => {
    res.setHeader('Retry-After', '1');
    sendError(res, 'CONFLICT', 'A request with this Idempotency-Key is still in progress; retry it later');
  },
  unavailable: (res) => sendError(res, 'UNAVAILABLE', 'The service is temporarily unavailable'),
};

/**
 * /v1: Stripe's answers. A key reused with other parameters is 400 `idempotency_error` with Stripe's wording; one
 * whose first request is still running is 409 (which Stripe's client libraries retry) with code
 * `idempotency_key_in_use`.
 */
export const stripeRefusals: IdempotencyRefusals = {
  invalidKey: (res, problem) =>
    sendStripeError(res, 400, {
      type: 'invalid_request_error',
      message: `Invalid Idempotency-Key: it ${problem}.`,
      param: 'Idempotency-Key',
    }),
  mismatch: (res, key) =>
    sendIdempotencyError(
      res,
      'Keys for idempotent requests can only be used with the same parameters they were first used with. ' +
        `Try using a key other than '${key}' if you meant to execute a different request.`,
    ),
  inProgress: (res, key) => {
    res.setHeader('Retry-After', '1');
    sendStripeError(res, 409, {
      type: 'idempotency_error',
      code: 'idempotency_key_in_use',
      message:
        'There is currently another in-progress request using this Idempotent Key (that probably means you ' +
        `submitted twice, and the other request is still going through): ${key}. Please try again later.`,
    });
  },
  unavailable: (res) =>
    sendStripeError(res, 503, { type: 'api_error', message: 'The service is temporarily unavailable; try again' }),
};
