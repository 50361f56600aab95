import type { Queryable } from '@platform/shared/db';
import { unnestColumns } from '@platform/shared/unnest';
import type { AttributionMethod } from '@platform/shared/schemas/events-api';

export interface ConversionEventRow {
  id: string;
  merchant_id: string;
  event_type: string;
  external_id: string;
  cookie_id: string | null;
  coupon: string | null;
  /** NUMERIC as text, exactly as stored. */
  amount: string;
  currency: string;
  payload: Record<string, unknown>;
  affiliate_id: string | null;
  attributed_by: AttributionMethod | null;
  visit_id: string | null;
  body_hash: Buffer;
  created_at: Date;
}

const columns = (sql: Queryable) => sql`
  id, merchant_id, event_type, external_id, cookie_id, coupon, amount, currency, payload,
  affiliate_id, attributed_by, visit_id, body_hash, created_at`;

export interface NewConversionEvent {
  id: string;
  merchantId: string;
  eventType: string;
  externalId: string;
  cookieId: string | null;
  coupon: string | null;
  /** Exact decimal text. */
  amount: string;
  currency: string;
  payload: Record<string, unknown>;
  affiliateId: string | null;
  attributedBy: AttributionMethod | null;
  visitId: string | null;
  bodyHash: Buffer;
  /** The id of its conversion.recorded outbox row. */
  messageId: string;
  visit: { id: string; ip_hash: string | null; fingerprint: string | null } | null;
  customerEmail: string | null;
  /** The trace context of the request (JSON text), kept in the outbox row; null with tracing off. */
  traceContext: string | null;
}

const eventColumns = unnestColumns({
  id: (e: NewConversionEvent) => e.id,
  merchantId: (e: NewConversionEvent) => e.merchantId,
  eventType: (e: NewConversionEvent) => e.eventType,
  externalId: (e: NewConversionEvent) => e.externalId,
  cookieId: (e: NewConversionEvent) => e.cookieId,
  coupon: (e: NewConversionEvent) => e.coupon,
  amount: (e: NewConversionEvent) => e.amount,
  currency: (e: NewConversionEvent) => e.currency,
  payload: (e: NewConversionEvent) => JSON.stringify(e.payload),
  affiliateId: (e: NewConversionEvent) => e.affiliateId,
  attributedBy: (e: NewConversionEvent) => e.attributedBy,
  visitId: (e: NewConversionEvent) => e.visitId,
  bodyHash: (e: NewConversionEvent) => e.bodyHash.toString('hex'),
  messageId: (e: NewConversionEvent) => e.messageId,
  visit: (e: NewConversionEvent) => (e.visit === null ? null : JSON.stringify(e.visit)),
  customerEmail: (e: NewConversionEvent) => e.customerEmail,
  traceContext: (e: NewConversionEvent) => e.traceContext,
});

/**
 * Inserts events, each unless its (merchant, event_type, external_id) is taken, and with each inserted one its
 * `conversion.recorded` outbox row; answers the rows inserted (in no particular order: match them by id). The
 * events must have distinct keys. One statement for all of them: one round trip and one commit, and atomic without
 * BEGIN/COMMIT (a statement is its own transaction), so an outbox row is written exactly when its event is. A
 * concurrent insert of the same key waits for the first to commit, so of any number of simultaneous requests
 * exactly one gets its row back. Rows are inserted in the order given: callers that insert several at once sort
 * them by key, so that two such statements wait for each other's keys in the same order and cannot deadlock.
 * The message data (ConversionRecordedSchema; its visit from present.ts conversionVisit) is completed from the
 * inserted row: the amount as stored and the creation time, in the ISO form Date.toISOString gives (created_at has
 * millisecond precision). The caller must call outboxCommitted after it returns.
 */
export async function insertEventsWithOutbox(
  sql: Queryable,
  events: NewConversionEvent[],
): Promise<ConversionEventRow[]> {
  if (events.length === 0) return [];
  const c = eventColumns(events);
  return sql<ConversionEventRow[]>`
    with input as (
      select * from unnest(
        ${c.id}::text[], ${c.merchantId}::text[], ${c.eventType}::text[], ${c.externalId}::text[], ${c.cookieId}::text[],
        ${c.coupon}::text[], ${c.amount}::text[], ${c.currency}::text[], ${c.payload}::text[], ${c.affiliateId}::text[],
        ${c.attributedBy}::text[], ${c.visitId}::text[], ${c.bodyHash}::text[], ${c.messageId}::text[], ${c.visit}::text[],
        ${c.customerEmail}::text[], ${c.traceContext}::text[]
      ) with ordinality as e(id, merchant_id, event_type, external_id, cookie_id, coupon, amount, currency, payload,
                             affiliate_id, attributed_by, visit_id, body_hash, message_id, visit, customer_email,
                             trace_context, n)
    ), inserted as (
      insert into conversion_events
        (id, merchant_id, event_type, external_id, cookie_id, coupon, amount, currency, payload,
         affiliate_id, attributed_by, visit_id, body_hash)
      select id, merchant_id, event_type, external_id, cookie_id, coupon, amount::numeric, currency, payload::jsonb,
             affiliate_id, attributed_by, visit_id, decode(body_hash, 'hex')
      from input order by n
      on conflict (merchant_id, event_type, external_id) do nothing
      returning ${columns(sql)}
    ), message as (
      insert into outbox (id, merchant_id, type, data, trace_context)
      select e.message_id, i.merchant_id, 'conversion.recorded', jsonb_build_object(
        'event_id', i.id, 'event_type', i.event_type, 'external_id', i.external_id, 'amount', i.amount::text,
        'currency', i.currency, 'affiliate_id', i.affiliate_id, 'attributed_by', i.attributed_by,
        'visit', e.visit::jsonb,
        'customer_email', e.customer_email,
        'created_at', to_char(i.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
        e.trace_context::jsonb
      from inserted i join input e on e.id = i.id
      order by e.n
    )
    select ${columns(sql)} from inserted`;
}

/** The stored events of the given keys (each with its merchant), those that exist, in no particular order. */
export async function findEventsByKeys(sql: Queryable, keys: EventKey[]): Promise<ConversionEventRow[]> {
  if (keys.length === 0) return [];
  const c = keyColumns(keys);
  return sql<ConversionEventRow[]>`
    select ${columns(sql)} from conversion_events
    where (merchant_id, event_type, external_id) in (
      select * from unnest(${c.merchantId}::text[], ${c.eventType}::text[], ${c.externalId}::text[]))`;
}

/** An event's idempotency key, with its merchant. */
export type EventKey = { merchantId: string; eventType: string; externalId: string };

const keyColumns = unnestColumns({
  merchantId: (k: EventKey) => k.merchantId,
  eventType: (k: EventKey) => k.eventType,
  externalId: (k: EventKey) => k.externalId,
});
