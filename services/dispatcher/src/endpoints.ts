import { DOMAIN_EVENT_TYPES, type DomainEventType } from '@platform/shared/catalogue';
import { encryptSecret, secretPlace } from '@platform/shared/crypto';
import type { Queryable, Sql } from '@platform/shared/db';
import { invalidInput, notFound } from '@platform/shared/errors';
import { isId, newId } from '@platform/shared/ids';
import type {
  CreateWebhookEndpointBody,
  DeliveryStatus,
  UpdateWebhookEndpointBody,
  WebhookDelivery,
  WebhookEndpoint,
} from '@platform/shared/schemas/webhooks';
import {
  generateWebhookSecret,
  WEBHOOK_DEFAULT_FAILURE_THRESHOLD,
  WEBHOOK_SECRET_ROTATION_GRACE_MS,
} from '@platform/shared/webhooks';
import type { DispatcherDeps } from './deps.ts';
import { presentDelivery, presentEndpoint } from './present.ts';
import { findDelivery, replayDeliveries } from './queries/delivery-log.ts';
import { fanOut, type NewDelivery } from './queries/fan-out.ts';
import {
  findEndpoint,
  insertEndpoint,
  rotateEndpointSecret,
  updateEndpoint,
  type EndpointRow,
} from './queries/endpoints.ts';
import { RefusedAddressError } from './domain/addresses.ts';
import { sampleEventData } from './domain/sample-events.ts';
import { checkEndpointUrl } from './ssrf.ts';

/**
 * Endpoint management shared by the REST operations and the operator CLI, so that both apply the same URL guard,
 * encrypt secrets the same way and keep the same invariants. Every function is scoped to a merchant.
 */

type Deps = Pick<DispatcherDeps, 'masterKey' | 'policy'>;

async function checkUrl(url: string, deps: Deps): Promise<string> {
  try {
    return (await checkEndpointUrl(url, deps.policy)).toString();
  } catch (err) {
    if (err instanceof RefusedAddressError) throw invalidInput('url', err.message, { cause: err });
    throw err;
  }
}

/** A malformed id names no row: NOT_FOUND, exactly like another merchant's endpoint. */
export async function loadEndpoint(
  sql: Queryable,
  merchantId: string,
  id: string,
  forUpdate = false,
): Promise<EndpointRow> {
  const row = isId('we', id) ? await findEndpoint(sql, merchantId, id, forUpdate) : undefined;
  if (!row) throw notFound('webhook endpoint');
  return row;
}

export async function createEndpoint(
  sql: Sql,
  deps: Deps,
  merchantId: string,
  body: CreateWebhookEndpointBody,
): Promise<WebhookEndpoint & { secret: string }> {
  const url = await checkUrl(body.url, deps);
  const secret = generateWebhookSecret();
  const id = newId('we');
  const row = await insertEndpoint(sql, {
    id,
    merchantId,
    url,
    description: body.description ?? '',
    eventTypes: body.event_types ?? [...DOMAIN_EVENT_TYPES],
    enabled: body.enabled ?? true,
    failureThreshold: body.failure_threshold ?? WEBHOOK_DEFAULT_FAILURE_THRESHOLD,
    secretEncrypted: encryptSecret(deps.masterKey, secret, secretPlace('webhook-secret', id, merchantId)),
  });
  return { ...presentEndpoint(row), secret };
}

export async function changeEndpoint(
  sql: Sql,
  deps: Deps,
  merchantId: string,
  id: string,
  body: UpdateWebhookEndpointBody,
): Promise<WebhookEndpoint> {
  if (!isId('we', id)) throw notFound('webhook endpoint');
  const url = body.url === undefined ? undefined : await checkUrl(body.url, deps);
  return sql.begin(async (tx) => {
    const current = await loadEndpoint(tx, merchantId, id, true);
    const changes: Parameters<typeof updateEndpoint>[3] = {};
    if (url !== undefined) changes.url = url;
    if (body.description !== undefined) changes.description = body.description;
    if (body.event_types !== undefined) changes.event_types = body.event_types;
    if (body.failure_threshold !== undefined) changes.failure_threshold = body.failure_threshold;
    if (body.enabled === true && !current.enabled) {
      // Re-enabling starts with a clean slate, or the next failure would disable it again.
      Object.assign(changes, { enabled: true, disabled_reason: null, consecutive_failures: 0 });
    } else if (body.enabled === false && current.enabled) {
      Object.assign(changes, { enabled: false, disabled_reason: 'manual' });
    }
    const row = Object.keys(changes).length > 0 ? await updateEndpoint(tx, merchantId, id, changes) : current;
    return presentEndpoint(row!);
  });
}

export async function rotateSecret(
  sql: Sql,
  deps: Deps,
  merchantId: string,
  id: string,
): Promise<WebhookEndpoint & { secret: string }> {
  if (!isId('we', id)) throw notFound('webhook endpoint');
  const secret = generateWebhookSecret();
  const row = await rotateEndpointSecret(
    sql,
    merchantId,
    id,
    // Bound to the endpoint, not to the column: the rotation moves the current value to previous_secret_encrypted.
    encryptSecret(deps.masterKey, secret, secretPlace('webhook-secret', id, merchantId)),
    WEBHOOK_SECRET_ROTATION_GRACE_MS,
  );
  if (!row) throw notFound('webhook endpoint');
  return { ...presentEndpoint(row), secret };
}

/** A sample event of the chosen type for this endpoint alone: a message and delivery like any other. */
export async function sendTestEvent(
  sql: Sql,
  merchantId: string,
  endpointId: string,
  type: DomainEventType,
): Promise<{ delivery: WebhookDelivery; created: NewDelivery[] }> {
  return sql.begin(async (tx) => {
    const endpoint = await loadEndpoint(tx, merchantId, endpointId, true);
    if (!endpoint.enabled) throw invalidInput('endpoint_id', 'the endpoint is disabled; enable it first');
    const [now] = await tx<{ at: Date }[]>`select date_trunc('milliseconds', now()) as at`;
    const at = now!.at.toISOString();
    const created = await fanOut(
      tx,
      { id: newId('msg'), type, created_at: at, merchant_id: merchantId, data: sampleEventData(type, at) },
      endpoint.id,
    );
    const found = await findDelivery(tx, merchantId, created[0]!.id);
    return { delivery: presentDelivery(found!.delivery, found!.attempts), created };
  });
}

/** A finished delivery (dead-lettered, or succeeded) goes out again; one still in progress is left alone (0). */
export async function replayOne(sql: Sql, merchantId: string, deliveryId: string): Promise<NewDelivery[]> {
  if (!isId('dlv', deliveryId)) throw notFound('webhook delivery');
  return sql.begin(async (tx) => {
    const found = await findDelivery(tx, merchantId, deliveryId);
    if (!found) throw notFound('webhook delivery');
    await requireEnabled(tx, merchantId, found.delivery.endpoint_id, 'delivery_id');
    const statuses: DeliveryStatus[] = ['dead_lettered', 'succeeded'];
    return replayDeliveries(tx, merchantId, { deliveryId, statuses });
  });
}

/** Bulk replay: the dead-lettered deliveries of one endpoint created in [since, until). */
export async function replayRange(
  sql: Sql,
  merchantId: string,
  endpointId: string,
  since: string,
  until: string,
): Promise<NewDelivery[]> {
  if (!isId('we', endpointId)) throw notFound('webhook endpoint');
  if (Date.parse(since) >= Date.parse(until)) throw invalidInput('until', 'must be later than since');
  return sql.begin(async (tx) => {
    await requireEnabled(tx, merchantId, endpointId, 'endpoint_id');
    return replayDeliveries(tx, merchantId, { endpointId, since, until, statuses: ['dead_lettered'] });
  });
}

async function requireEnabled(tx: Queryable, merchantId: string, endpointId: string, path: string): Promise<void> {
  const endpoint = await loadEndpoint(tx, merchantId, endpointId);
  // Replaying into a disabled endpoint would only dead-letter again at once.
  if (!endpoint.enabled) throw invalidInput(path, 'the endpoint is disabled; enable it first');
}
