import type { DeliveryStatus } from '@platform/shared/schemas/webhooks';

/**
 * The delivery state table (docs/WEBHOOKS.md) as pure rules: what an attempt's outcome makes of its delivery.
 * No I/O: test/webhooks/verdict.happy.test.ts checks the table without a database.
 */

export type DeadLetterReason = 'client_error' | 'gone' | 'max_attempts' | 'endpoint_disabled';

/** What happened on the wire. */
export interface AttemptOutcome {
  attemptedAt: Date;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseBody: string;
  retryAfterMs: number | null;
}

export type Verdict =
  | { kind: 'succeeded' }
  | { kind: 'gone' }
  | { kind: 'client_error' }
  | { kind: 'retry'; delayMs: number }
  | { kind: 'max_attempts' };

/**
 * The delivery state table: 2xx succeeds; 410 dead-letters and disables the endpoint; any
 * other 4xx but 429 dead-letters at once; 429, 5xx, 3xx (redirects are not followed), timeouts and network errors
 * are retried by the backoff table, Retry-After honoured, until the tenth attempt.
 */
export function judgeAttempt(
  outcome: Pick<AttemptOutcome, 'statusCode' | 'retryAfterMs'>,
  attemptsMade: number,
  maxAttempts: number,
  delayFor: (attemptsMade: number, retryAfterMs: number | null) => number,
): Verdict {
  const code = outcome.statusCode;
  if (code !== null && code >= 200 && code < 300) return { kind: 'succeeded' };
  if (code === 410) return { kind: 'gone' };
  if (code !== null && code >= 400 && code < 500 && code !== 429) return { kind: 'client_error' };
  if (attemptsMade >= maxAttempts) return { kind: 'max_attempts' };
  return { kind: 'retry', delayMs: delayFor(attemptsMade, outcome.retryAfterMs) };
}

const STATUS_AFTER: Record<Verdict['kind'], DeliveryStatus> = {
  succeeded: 'succeeded',
  retry: 'retrying',
  gone: 'dead_lettered',
  client_error: 'dead_lettered',
  max_attempts: 'dead_lettered',
};

/** The delivery's status once an attempt had this verdict. */
export const statusAfter = (verdict: Verdict): DeliveryStatus => STATUS_AFTER[verdict.kind];

/** Why the delivery is dead-lettered after this verdict, or null when it is not. */
export function deadLetterReasonOf(verdict: Verdict): DeadLetterReason | null {
  return verdict.kind === 'gone' || verdict.kind === 'client_error' || verdict.kind === 'max_attempts'
    ? verdict.kind
    : null;
}
