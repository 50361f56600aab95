import type { WebhookDelivery, WebhookEndpoint } from '@platform/shared/schemas/webhooks';
import type { DomainEventType } from '@platform/shared/catalogue';
import type { EndpointRow } from './queries/endpoints.ts';
import type { AttemptRow, DeliveryRow } from './queries/delivery-log.ts';

/** Field by field: the secret columns can never reach a response. */
export function presentEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    event_types: row.event_types as DomainEventType[],
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    failure_threshold: row.failure_threshold,
    consecutive_failures: row.consecutive_failures,
    last_success_at: row.last_success_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function presentDelivery(row: DeliveryRow, attempts: AttemptRow[]): WebhookDelivery {
  return {
    id: row.id,
    message_id: row.message_id,
    endpoint_id: row.endpoint_id,
    event_type: row.event_type as DomainEventType,
    status: row.status,
    attempt_count: row.attempt_count,
    next_attempt_at:
      row.status === 'pending' || row.status === 'retrying' ? (row.next_attempt_at?.toISOString() ?? null) : null,
    dead_letter_reason: row.dead_letter_reason,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    attempts: attempts.map((a) => ({
      attempted_at: a.attempted_at.toISOString(),
      status_code: a.status_code,
      error: a.error,
      duration_ms: a.duration_ms,
      response_body: a.response_body,
    })),
  };
}
