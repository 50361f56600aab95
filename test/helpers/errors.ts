import type { Test } from 'tap';
import type { ApiResponse } from './client.ts';

export type Detail = { path: string; message: string };

/**
 * The response is exactly the error envelope `{ error: { code, message, request_id[, details] } }` with the given
 * status, and `request_id` is the `x-request-id` header. (test/gateway/expect.ts `assertError` checks the envelope's
 * shape when the message is not the point.)
 */
export function expectError(
  t: Test,
  res: ApiResponse,
  status: number,
  code: string,
  message: string,
  details?: Detail[],
): void {
  t.equal(res.status, status, `status ${status}`);
  const requestId = res.headers.get('x-request-id');
  t.ok(requestId, 'x-request-id header');
  t.strictSame(res.body, { error: { code, message, request_id: requestId, ...(details ? { details } : {}) } });
}

/** 400 INVALID_INPUT with exactly these details. */
export const expectInvalid = (t: Test, res: ApiResponse, details: Detail[]): void =>
  expectError(t, res, 400, 'INVALID_INPUT', 'The request is invalid', details);
