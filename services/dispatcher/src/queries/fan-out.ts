import type { DomainEvent } from '@platform/shared/catalogue';
import type { Queryable } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';

/** A delivery created and due now, for which a wake-up hint is to be published. */
export interface NewDelivery {
  id: string;
  queuedAt: Date;
}

/** The envelope's exact bytes: fixed here, once, and sent unchanged by every attempt and replay. */
export function serialiseEnvelope(event: DomainEvent): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    created_at: event.created_at,
    merchant_id: event.merchant_id,
    data: event.data,
  });
}

/** A delivery of a fanned-out message, with the endpoint it goes to and when it was hinted (null: not yet). */
export interface FannedOut {
  id: string;
  endpointId: string;
  queuedAt: Date | null;
}

interface MessageEndpoint {
  message_id: string;
  merchant_id: string;
  endpoint_id: string;
}

/**
 * Inserts the messages of many events in one statement and returns, for those not recorded before, the enabled
 * endpoints of their merchants subscribed to their types (or `onlyEndpointId` alone, whatever it subscribes to: test
 * events). Idempotent: an event already recorded (a JetStream redelivery, or the outbox reconciler first) yields
 * nothing, so an endpoint registered later never receives an older event by accident. A merchant that does not
 * exist fails the whole statement (foreign key), and the caller falls back to one event at a time to find it.
 * `traceContexts`: with tracing on, each event's trace context (JSON text), which every attempt of it continues.
 */
export async function insertMessages(
  tx: Queryable,
  events: DomainEvent[],
  onlyEndpointId?: string,
  traceContexts?: (string | null)[],
): Promise<MessageEndpoint[]> {
  return tx<MessageEndpoint[]>`
    with inserted as (
      insert into webhook_messages (id, merchant_id, type, body, created_at, trace_context)
      select id, merchant_id, type, body, created_at, trace_context::jsonb
      from unnest(${events.map((e) => e.id)}::text[], ${events.map((e) => e.merchant_id)}::text[],
                  ${events.map((e) => e.type)}::text[], ${events.map(serialiseEnvelope)}::text[],
                  ${events.map((e) => e.created_at)}::timestamptz[],
                  ${traceContexts ?? events.map(() => null)}::text[])
        as m(id, merchant_id, type, body, created_at, trace_context)
      on conflict (id) do nothing
      returning id, merchant_id, type)
    select i.id as message_id, i.merchant_id, e.id as endpoint_id
    from inserted i join webhook_endpoints e on e.merchant_id = i.merchant_id and e.enabled
      and ${onlyEndpointId ? tx`e.id = ${onlyEndpointId}` : tx`i.type = any(e.event_types)`}`;
}

/**
 * One delivery per (message, endpoint) of `insertMessages`, due now. `hinted`: its wake-up hint is about to be
 * published (queued_at now); otherwise the replica claims what it has room for at once, and the sweeper hints the
 * rest as soon as their endpoint has room.
 */
export async function insertDeliveries(
  tx: Queryable,
  rows: MessageEndpoint[],
  opts: { hinted: boolean },
): Promise<FannedOut[]> {
  if (rows.length === 0) return [];
  const created = await tx<{ id: string; endpoint_id: string; queued_at: Date | null }[]>`
    insert into webhook_deliveries (id, message_id, endpoint_id, merchant_id, status, next_attempt_at, queued_at)
    select d.id, d.message_id, d.endpoint_id, d.merchant_id, 'pending', now(), ${opts.hinted ? tx`now()` : tx`null`}
    from unnest(${rows.map(() => newId('dlv'))}::text[], ${rows.map((r) => r.message_id)}::text[], ${rows.map((r) => r.endpoint_id)}::text[],
                ${rows.map((r) => r.merchant_id)}::text[]) as d (id, message_id, endpoint_id, merchant_id)
    on conflict (message_id, endpoint_id) do nothing
    returning id, endpoint_id, queued_at`;
  return created.map((c) => ({ id: c.id, endpointId: c.endpoint_id, queuedAt: c.queued_at }));
}

/**
 * One event's message and deliveries, hinted at once (a test event, or a fan-out of one event at a time).
 * `onlyEndpointId` sends to that endpoint alone, whatever it subscribes to (test events).
 */
export async function fanOut(tx: Queryable, event: DomainEvent, onlyEndpointId?: string): Promise<NewDelivery[]> {
  const created = await insertDeliveries(tx, await insertMessages(tx, [event], onlyEndpointId), { hinted: true });
  return created.map((c) => ({ id: c.id, queuedAt: c.queuedAt! }));
}
