import type { Queryable } from '@platform/shared/db';
import type { PartitionedTable } from '@platform/shared/partitions';
import { unnestColumns } from '@platform/shared/unnest';
import type { AttributionMethod } from '@platform/shared/schemas/events-api';
import { madeWithin } from './visits.ts';

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
 * events must have distinct keys. A key is taken once, ever, in conversion_event_keys (migration 039): the events
 * themselves are partitioned by month, and a partitioned table can have no unique key without its time column. The
 * key's row is inserted first (ON CONFLICT on the key), and the event's row and its outbox row only for the keys
 * inserted. One statement for all of them: one round trip and one commit, and atomic without BEGIN/COMMIT (a
 * statement is its own transaction), so an event and its outbox row are written exactly when its key is. A
 * concurrent insert of the same key waits for the first to commit, so of any number of simultaneous requests
 * exactly one gets its row back. Rows are inserted in the order given: callers that insert several at once sort
 * them by key, so that two such statements wait for each other's keys in the same order and cannot deadlock.
 * The message data (ConversionRecordedSchema; its visit from present.ts conversionVisit) is completed from the
 * inserted row: the amount as stored and the creation time, in the ISO form Date.toISOString gives (created_at has
 * millisecond precision, and the key row keeps the same instant: the event's month). The caller must call
 * outboxCommitted after it returns.
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
    ), keyed as (
      insert into conversion_event_keys (merchant_id, event_type, external_id, event_id, created_at)
      select merchant_id, event_type, external_id, id, date_trunc('milliseconds', now())
      from input order by n
      on conflict (merchant_id, event_type, external_id) do nothing
      returning event_id, created_at
    ), inserted as (
      insert into conversion_events
        (id, merchant_id, event_type, external_id, cookie_id, coupon, amount, currency, payload,
         affiliate_id, attributed_by, visit_id, body_hash, created_at)
      select e.id, e.merchant_id, e.event_type, e.external_id, e.cookie_id, e.coupon, e.amount::numeric, e.currency,
             e.payload::jsonb, e.affiliate_id, e.attributed_by, e.visit_id, decode(e.body_hash, 'hex'), k.created_at
      from input e join keyed k on k.event_id = e.id
      order by e.n
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

/**
 * The stored events of the given keys (each with its merchant), those that exist, in no particular order. Each key
 * row names its event and the instant it was written, so that each event is read from its month alone.
 */
export async function findEventsByKeys(sql: Queryable, keys: EventKey[]): Promise<ConversionEventRow[]> {
  if (keys.length === 0) return [];
  const c = keyColumns(keys);
  return sql<ConversionEventRow[]>`
    select ${columns(sql)} from conversion_events
    where (merchant_id, id, created_at) in (
      select merchant_id, event_id, created_at from conversion_event_keys
      where (merchant_id, event_type, external_id) in (
        select * from unnest(${c.merchantId}::text[], ${c.eventType}::text[], ${c.externalId}::text[])))`;
}

/**
 * Conversion events are partitioned by month on created_at (migration 041) and kept: the ledger of what was
 * recorded. Two months are made ahead. Each month is indexed on id (the key's row names its event), on merchant
 * and time (a merchant's events over a period), on the visit of those credited by cookie (a click's `converted`)
 * and on affiliate and time (one affiliate's events; both migration 058), and analyzed as the table was (008).
 */
export const conversionEventPartitions: PartitionedTable = {
  table: 'conversion_events',
  period: 'month',
  keyType: 'timestamptz',
  ahead: 2,
  partitionIndexes: [
    { suffix: 'id', columns: 'id' },
    { suffix: 'merchant', columns: 'merchant_id, created_at' },
    { suffix: 'visit', columns: 'merchant_id, visit_id', where: "attributed_by = 'cookie'" },
    { suffix: 'affiliate', columns: 'merchant_id, affiliate_id, created_at', where: 'affiliate_id is not null' },
  ],
  storage: 'autovacuum_analyze_scale_factor = 0.01, autovacuum_analyze_threshold = 1000',
};

/** An event's idempotency key, with its merchant. */
export type EventKey = { merchantId: string; eventType: string; externalId: string };

const keyColumns = unnestColumns({
  merchantId: (k: EventKey) => k.merchantId,
  eventType: (k: EventKey) => k.eventType,
  externalId: (k: EventKey) => k.externalId,
});

/** The page-size bound of listEvents: a limit is written into the statement, so it must be one. */
const EVENTS_PAGE_MAX = 1000;

/**
 * A page of the merchant's events, newest first by (created_at, id), over each month's (merchant_id, created_at)
 * index. With `externalId` the events are those of its keys (conversion_event_keys, a handful whatever the size of
 * the table: one per event type), each read from its month.
 */
export async function listEvents(
  sql: Queryable,
  merchantId: string,
  f: {
    affiliateId?: string;
    eventType?: string;
    externalId?: string;
    createdAfter?: string;
    createdBefore?: string;
    after?: { created_at: string; id: string };
    limit: number;
  },
): Promise<ConversionEventRow[]> {
  // Written into the statement, as the other lists do, so that the generic plan is costed for this page size.
  if (!Number.isInteger(f.limit) || f.limit < 1 || f.limit > EVENTS_PAGE_MAX)
    throw new RangeError(`limit ${f.limit} is not a page size`);
  return sql<ConversionEventRow[]>`
    select ${columns(sql)} from conversion_events
    where merchant_id = ${merchantId}
      ${
        f.externalId === undefined
          ? sql``
          : sql`and (merchant_id, id, created_at) in (
          select merchant_id, event_id, created_at from conversion_event_keys
          where merchant_id = ${merchantId} and external_id = ${f.externalId}
            ${f.eventType === undefined ? sql`` : sql`and event_type = ${f.eventType}`})`
      }
      ${f.affiliateId === undefined ? sql`` : sql`and affiliate_id = ${f.affiliateId}`}
      ${f.eventType === undefined ? sql`` : sql`and event_type = ${f.eventType}`}
      ${f.createdAfter === undefined ? sql`` : sql`and created_at > ${f.createdAfter}::timestamptz`}
      ${f.createdBefore === undefined ? sql`` : sql`and created_at < ${f.createdBefore}::timestamptz`}
      ${f.after ? sql`and (created_at, id) < (${f.after.created_at}::timestamptz, ${f.after.id})` : sql``}
    order by created_at desc, id desc
    limit ${sql.unsafe(String(f.limit))}`;
}

/** One event of the merchant, read from the months its id's time allows. */
export async function findEvent(
  sql: Queryable,
  merchantId: string,
  id: string,
): Promise<ConversionEventRow | undefined> {
  const made = madeWithin('evt', id);
  if (made === undefined) return undefined;
  const [row] = await sql<ConversionEventRow[]>`
    select ${columns(sql)} from conversion_events
    where merchant_id = ${merchantId} and id = ${id}
      and created_at >= ${made.from}::timestamptz and created_at < ${made.to}::timestamptz`;
  return row;
}
