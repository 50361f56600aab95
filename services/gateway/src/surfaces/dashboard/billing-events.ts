import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { nextAttemptDelayMs, parseRetryAfter, webhookHeaders } from '@platform/shared/webhooks';
import { leaseDueEvents, markDelivered, markFailed } from './queries/billing-events.ts';

/**
 * Sends the billing events (shared/src/billing-events.ts) to the platform operator's endpoint, BILLING_WEBHOOK_URL,
 * signed as the merchants' webhooks are (Standard Webhooks, BILLING_WEBHOOK_SECRET; webhook-id is the event's id, on
 * which the receiver deduplicates). Each batch is leased (FOR UPDATE SKIP LOCKED, its next attempt pushed past the
 * request's time) so that replicas never send one event at once; a 2xx delivers it, anything else is tried again
 * with the webhooks' backoff. Events are kept: they are the billing history the operator may replay from.
 */
export interface BillingWebhookTarget {
  url: string;
  secret: string;
}

const BATCH = 20;
const TIMEOUT_MS = 10_000;

/** One pass over the events due; answers how many were delivered. */
export async function deliverBillingEvents(
  sql: Sql,
  target: BillingWebhookTarget,
  log: Logger,
  now = new Date(),
): Promise<number> {
  const due = await leaseDueEvents(sql, now, 2 * TIMEOUT_MS, BATCH);
  let delivered = 0;
  for (const event of due.sort((a, b) => a.created_at.getTime() - b.created_at.getTime())) {
    const body = JSON.stringify({
      id: event.id,
      type: event.type,
      created_at: event.created_at.toISOString(),
      merchant_id: event.merchant_id,
      data: event.data,
    });
    const outcome = await post(target, event.id, body);
    if (outcome.ok) {
      delivered++;
      await markDelivered(sql, event);
      continue;
    }
    const delay = nextAttemptDelayMs(event.attempts, 1, outcome.retryAfterMs);
    await markFailed(sql, event, outcome.error, now, delay);
    log.warn('billing event not delivered; tried again later', { event_id: event.id, error: outcome.error });
  }
  return delivered;
}

/** One signed POST, timestamped when it is sent (the receiver checks the time); never throws. */
async function post(target: BillingWebhookTarget, id: string, body: string) {
  try {
    const res = await fetch(target.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...webhookHeaders([target.secret], id, Math.floor(Date.now() / 1000), body),
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await res.body?.cancel();
    if (res.status >= 200 && res.status < 300) return { ok: true as const };
    return {
      ok: false as const,
      error: `HTTP ${res.status}`,
      retryAfterMs: parseRetryAfter(res.headers.get('retry-after')),
    };
  } catch (err) {
    return { ok: false as const, error: (err as Error).name, retryAfterMs: null };
  }
}
