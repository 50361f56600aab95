import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { nextAttemptDelayMs, parseRetryAfter, webhookHeaders } from '@platform/shared/webhooks';

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

interface EventRow {
  merchant_id: string;
  id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
  attempts: number;
}

/** One pass over the events due; answers how many were delivered. */
export async function deliverBillingEvents(
  sql: Sql,
  target: BillingWebhookTarget,
  log: Logger,
  now = new Date(),
): Promise<number> {
  const due = await sql<EventRow[]>`
    update billing_events e set attempts = e.attempts + 1,
      next_attempt_at = ${now}::timestamptz + ${2 * TIMEOUT_MS} * interval '1 millisecond'
    from (select merchant_id, id from billing_events
          where delivered_at is null and next_attempt_at <= ${now}
          order by next_attempt_at limit ${BATCH} for update skip locked) d
    where e.merchant_id = d.merchant_id and e.id = d.id
    returning e.merchant_id, e.id, e.type, e.data, e.created_at, e.attempts`;
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
      await sql`update billing_events set delivered_at = now(), last_error = null
        where merchant_id = ${event.merchant_id} and id = ${event.id}`;
      continue;
    }
    const delay = nextAttemptDelayMs(event.attempts, 1, outcome.retryAfterMs);
    await sql`update billing_events set last_error = ${outcome.error},
        next_attempt_at = ${now}::timestamptz + ${delay} * interval '1 millisecond'
      where merchant_id = ${event.merchant_id} and id = ${event.id}`;
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
