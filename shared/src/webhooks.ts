import { createHmac, randomBytes } from 'node:crypto';

/**
 * Delivery rules (docs/WEBHOOKS.md) as data, shared by the dispatcher, the operator CLI and the tests, so that the
 * production values are asserted where they are defined.
 */

/** Delay before attempt n+2 after attempt n+1 failed: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
export const WEBHOOK_BACKOFF_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  14 * 3_600_000,
  20 * 3_600_000,
  24 * 3_600_000,
];
/** Attempts per delivery before it is dead-lettered: the first one plus one per backoff step. */
export const WEBHOOK_MAX_ATTEMPTS = 10;
/** Retry-After may push the next attempt later than the table, never more than this. */
export const WEBHOOK_RETRY_AFTER_CAP_MS = 24 * 3_600_000;
export const WEBHOOK_DEFAULT_FAILURE_THRESHOLD = 15;
/** After a rotation the previous secret signs too, for this long. */
export const WEBHOOK_SECRET_ROTATION_GRACE_MS = 24 * 3_600_000;
/** What the delivery log shows per endpoint (records are kept for replay for WEBHOOK_RETENTION_DAYS, a setting). */
export const WEBHOOK_LOG_SIZE = 100;
export const WEBHOOK_RESPONSE_BODY_BYTES = 1024;

/**
 * When the attempt after `attemptsMade` failed attempts may run: the table's delay (times `scale`, which tests use
 * to shrink it), or later when the receiver's Retry-After says so (capped at 24 h; never scaled).
 */
export function nextAttemptDelayMs(attemptsMade: number, scale: number, retryAfterMs: number | null): number {
  const step = WEBHOOK_BACKOFF_MS[Math.min(Math.max(attemptsMade, 1), WEBHOOK_BACKOFF_MS.length) - 1]!;
  const fromTable = Math.round(step * scale);
  if (retryAfterMs === null) return fromTable;
  return Math.max(fromTable, Math.min(retryAfterMs, WEBHOOK_RETRY_AFTER_CAP_MS));
}

/** Retry-After as delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | null {
  if (value === null || value === undefined) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}

// ---- Standard Webhooks signing -------------------------------------------------------------------------------

const SECRET_PREFIX = 'whsec_';

/** `whsec_` + base64 of 32 random bytes: the form Standard Webhooks libraries accept as is. */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('not a webhook secret');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` for one secret. */
function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three headers of one attempt; several secrets (during a rotation) give space-separated signatures. */
export function webhookHeaders(
  secrets: string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signWebhook(s, id, timestampSeconds, body)).join(' '),
  };
}
