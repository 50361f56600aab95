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
 * Inserts the event unless (merchant, event_type, external_id) is taken; answers the new row, or undefined when
 * another request recorded that key first. A concurrent insert of the same key waits for the first transaction,
 * so of any number of simultaneous requests exactly one gets a row back.
 */
export async function insertEventIfNew(
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
  },
): Promise<ConversionEventRow | undefined> {
  const [row] = await sql<ConversionEventRow[]>`
    insert into conversion_events
      (id, merchant_id, event_type, external_id, cookie_id, coupon, amount, currency, payload,
       affiliate_id, attributed_by, visit_id, body_hash)
    values
      (${e.id}, ${e.merchantId}, ${e.eventType}, ${e.externalId}, ${e.cookieId}, ${e.coupon}, ${e.amount}::numeric,
       ${e.currency}, ${sql.json(e.payload as never)}, ${e.affiliateId}, ${e.attributedBy}, ${e.visitId}, ${e.bodyHash})
    on conflict (merchant_id, event_type, external_id) do nothing
    returning ${columns(sql)}`;
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
