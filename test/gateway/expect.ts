import type { ApiResponse } from '../helpers/client.ts';
import type { TAP } from 'tap';

/** The assertions these helpers use; every tap Test has them. */
export type Asserts = Pick<TAP, 'equal' | 'ok' | 'same' | 'match' | 'strictSame'>;

export interface ErrorExpectation {
  /** The exact `error.details` list; omit to assert only that details are absent (or use `detailPaths`). */
  details?: { path: string; message: unknown }[];
  /** The exact set of `error.details[].path`, in any order. */
  detailPaths?: string[];
}

/**
 * An error response is exactly the envelope: `{ error: { code, message, request_id[, details] } }`, with the exact
 * status and code, a JSON content type, and `error.request_id` equal to the `x-request-id` header.
 */
export function assertError(
  t: Asserts,
  res: ApiResponse,
  status: number,
  code: string,
  expect: ErrorExpectation = {},
): void {
  const what = `${status} ${code}`;
  t.equal(res.status, status, `status is ${status} (${res.text.slice(0, 200)})`);
  t.match(res.headers.get('content-type') ?? '', /^application\/json/, `${what}: JSON content type`);
  const body = res.body as { error?: Record<string, unknown> } | undefined;
  t.same(Object.keys(body ?? {}), ['error'], `${what}: the body is the error envelope`);
  const error = body?.error ?? {};
  t.equal(error['code'], code, `error.code is ${code}`);
  t.ok(
    typeof error['message'] === 'string' && error['message'].length > 0,
    `${what}: error.message is a non-empty string`,
  );
  const requestId = res.headers.get('x-request-id');
  t.ok(requestId, `${what}: x-request-id header`);
  t.equal(error['request_id'], requestId, `${what}: error.request_id repeats x-request-id`);
  const keys = Object.keys(error).sort();
  if (expect.details || expect.detailPaths) {
    t.same(keys, ['code', 'details', 'message', 'request_id'], `${what}: envelope fields`);
    const details = (error['details'] ?? []) as { path: string; message: string }[];
    if (expect.details) t.match(details, expect.details, `${what}: details`);
    if (expect.detailPaths)
      t.same(details.map((d) => d.path).sort(), [...expect.detailPaths].sort(), `${what}: detail paths`);
    if (expect.details) t.equal(details.length, expect.details.length, `${what}: number of details`);
  } else {
    t.same(
      keys.filter((k) => k !== 'details'),
      ['code', 'message', 'request_id'],
      `${what}: envelope fields`,
    );
  }
}

/** RateLimit-* headers are present and whole numbers; returns them. */
export function rateHeaders(t: Asserts, res: ApiResponse): { limit: number; remaining: number; reset: number } {
  const read = (name: string) => {
    const raw = res.headers.get(name);
    t.match(raw ?? '', /^\d+$/, `${name} is a whole number on ${res.status} (got ${raw})`);
    return Number(raw);
  };
  return { limit: read('ratelimit-limit'), remaining: read('ratelimit-remaining'), reset: read('ratelimit-reset') };
}
