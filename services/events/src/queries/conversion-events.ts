import type { Queryable } from '@platform/shared/db';
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

/**
 * Inserts the event unless (merchant, event_type, external_id) is taken, and with it its `conversion.recorded`
 * outbox row; answers the new row, or undefined when another request recorded that key first. A concurrent insert
 * of the same key waits for the first to commit, so of any number of simultaneous requests exactly one gets a row
 * back. One statement: one round trip, and atomic without BEGIN/COMMIT (a statement is its own transaction), so
 * the outbox row is written exactly when the event is. The
 * message data (ConversionRecordedSchema; its visit from present.ts conversionVisit) is completed from the inserted
 * row: the amount as stored and the creation time, in the ISO form Date.toISOString gives (created_at has
 * millisecond precision). The caller must call outboxCommitted after it returns.
 */
export async function insertEventWithOutbox(
  sql: Queryable,
  e: {
    id: string;
    merchantId: string;
    eventType: string;
    externalId: string;
    cookieId: string | null;
    coupon: string | null;
    amount: string;
    currency: string;
    payload: Record<string, unknown>;
    affiliateId: string | null;
    attributedBy: AttributionMethod | null;
    visitId: string | null;
    bodyHash: Buffer;
    messageId: string;
    visit: { id: string; ip_hash: string | null; fingerprint: string | null } | null;
    customerEmail: string | null;
  },
): Promise<ConversionEventRow | undefined> {
  const [row] = await sql<ConversionEventRow[]>`
    with inserted as (
      insert into conversion_events
        (id, merchant_id, event_type, external_id, cookie_id, coupon, amount, currency, payload,
         affiliate_id, attributed_by, visit_id, body_hash)
      values
        (${e.id}, ${e.merchantId}, ${e.eventType}, ${e.externalId}, ${e.cookieId}, ${e.coupon}, ${e.amount}::numeric,
         ${e.currency}, ${sql.json(e.payload as never)}, ${e.affiliateId}, ${e.attributedBy}, ${e.visitId}, ${e.bodyHash})
      on conflict (merchant_id, event_type, external_id) do nothing
      returning ${columns(sql)}
    ), message as (
      insert into outbox (id, merchant_id, type, data)
      select ${e.messageId}, i.merchant_id, 'conversion.recorded', jsonb_build_object(
        'event_id', i.id, 'event_type', i.event_type, 'external_id', i.external_id, 'amount', i.amount::text,
        'currency', i.currency, 'affiliate_id', i.affiliate_id, 'attributed_by', i.attributed_by,
        'visit', ${e.visit === null ? null : sql.json(e.visit as never)}::jsonb,
        'customer_email', ${e.customerEmail}::text,
        'created_at', to_char(i.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
      from inserted i
    )
    select ${columns(sql)} from inserted`;
  return row;
}

export async function findEventByKey(
  sql: Queryable,
  merchantId: string,
  eventType: string,
  externalId: string,
): Promise<ConversionEventRow | undefined> {
  const [row] = await sql<ConversionEventRow[]>`
    select ${columns(sql)} from conversion_events
    where merchant_id = ${merchantId} and event_type = ${eventType} and external_id = ${externalId}`;
  return row;
}
