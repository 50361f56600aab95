import type { Sql } from '@platform/shared/db';
import {
  carrierJson,
  carrierOf,
  context,
  inBatchSpan,
  ROOT_CONTEXT,
  tracingEnabled,
  type Context,
} from '@platform/shared/tracing/context';
import { inDatabaseSpan } from '@platform/shared/tracing/db';
import { ApiError } from '@platform/shared/errors';
import { newId } from '@platform/shared/ids';
import type { Logger } from '@platform/shared/log';
import type { OperationResult } from '@platform/shared/operation';
import { outboxCommitted } from '@platform/shared/outbox';
import { createBatcher } from '@platform/shared/batcher';
import type { RecordEventBody } from '@platform/shared/schemas/events-api';
import { settingsAndAttribution, visitIdOf } from './attribution.ts';
import { hashBody } from '@platform/shared/body-hash';
import { checkEvent } from './check-event.ts';
import { conversionVisit, presentEvent } from './present.ts';
import { findAttributionContexts, type AttributionLookup } from './queries/attribution-context.ts';
import {
  findEventsByKeys,
  insertEventsWithOutbox,
  type ConversionEventRow,
  type EventKey,
  type NewConversionEvent,
} from './queries/conversion-events.ts';

/** Batches being recorded at once; events arriving while every slot is busy wait and go together in the next. */
export const RECORDING_SLOTS = 2;
/** The most events one batch records (one read and one insert statement). */
const LARGEST_BATCH = 64;
/**
 * Least time between the starts of two batches that are not full: an event after a quiet spell is recorded at once;
 * under load each batch carries what arrived in the interval. Short, as a request waits for it.
 */
export const EVENT_BATCH_INTERVAL_MS = 4;

interface Request {
  merchantId: string;
  body: RecordEventBody;
  log: Logger;
  /** With tracing on, the context the request came in (its operation's span); null otherwise. */
  trace: Context | null;
  resolve(result: OperationResult): void;
  reject(err: unknown): void;
}

/** An event ready to insert, with the request that asked for it. */
interface Prepared {
  request: Request;
  event: NewConversionEvent;
  key: string;
}

export type RecordEvent = (merchantId: string, body: RecordEventBody, log: Logger) => Promise<OperationResult>;

/**
 * Records conversion events (POST /api/v1/events) in batches: the requests that arrive in one turn of the event
 * loop, or while RECORDING_SLOTS batches are in progress, are recorded together with one statement that reads every
 * event's settings and attribution and one that inserts every event with its outbox row, instead of two statements
 * per event.
 *
 * Why: on this path a statement's socket writes, the backend's wake-up and the commit's WAL flush cost more than
 * the rows themselves, so recording n events in one commit costs little more than recording one (batcher.ts). A
 * batch that is not full starts no sooner than `leastIntervalMs` after the previous one: at a steady moderate rate a
 * batch started the moment a slot was free would carry one event and pay every fixed cost for it alone.
 *
 * Each request keeps its own outcome, as if alone: 201 with the event it inserted; for a key already taken, 200
 * with the stored event when its body hash matches and 409 CONFLICT when it does not; 400 for its own invalid input.
 * Requests in one batch with the same key are compared with the one that came first, as if it had been inserted
 * before them. When the batch's insert fails, its events are inserted one by one, so one bad event fails alone.
 */
export function createEventRecorder(sql: Sql, attributionSql: Sql, leastIntervalMs: number): RecordEvent {
  const batcher = createBatcher<Request>(
    { slots: RECORDING_SLOTS, largestBatch: LARGEST_BATCH, leastIntervalMs },
    (batch) => (tracingEnabled() ? recordTraced(sql, attributionSql, batch) : recordBatch(sql, attributionSql, batch)),
    (err, batch) => {
      for (const r of batch) r.reject(err);
    },
  );
  return (merchantId, body, log) =>
    new Promise<OperationResult>((resolve, reject) =>
      batcher.add({ merchantId, body, log, trace: tracingEnabled() ? context.active() : null, resolve, reject }),
    );
}

/** recordBatch in a span: the child of its first sampled request's, linked to the others' (inBatchSpan). */
function recordTraced(sql: Sql, attributionSql: Sql, batch: Request[]): Promise<void> {
  const parents = new Array<Context>(batch.length);
  for (let i = 0; i < batch.length; i++) parents[i] = batch[i]!.trace ?? ROOT_CONTEXT;
  return inBatchSpan(
    'record events',
    parents,
    () => ({ 'events.batch.size': batch.length }),
    () => recordBatch(sql, attributionSql, batch),
  );
}

/**
 * Records one batch; settles every request (a rejection after a request was settled is ignored by its promise).
 * Loops rather than callbacks made per batch, here and in insertGroup: see @platform/shared/unnest for why.
 */
async function recordBatch(sql: Sql, attributionSql: Sql, batch: Request[]): Promise<void> {
  const lookups = new Array<AttributionLookup>(batch.length);
  for (let i = 0; i < batch.length; i++) {
    const r = batch[i]!;
    lookups[i] = { merchantId: r.merchantId, visitId: visitIdOf(r.body.cookie_id), coupon: r.body.coupon ?? null };
  }
  const contexts = await inDatabaseSpan('select attribution context', () =>
    findAttributionContexts(attributionSql, lookups),
  );

  // The first request of each key is inserted; the later ones of that key are answered from its outcome.
  const first = new Map<string, Prepared>();
  const repeats: Prepared[] = [];
  for (let i = 0; i < batch.length; i++) {
    const request = batch[i]!;
    const found = contexts[i];
    try {
      if (!found) throw new Error('the merchant of an authenticated key has no row');
      const prepared = prepare(request, found);
      if (first.has(prepared.key)) repeats.push(prepared);
      else first.set(prepared.key, prepared);
    } catch (err) {
      request.reject(err);
    }
  }
  if (first.size === 0) return;

  // In key order, so that concurrent batches take the keys' index entries in the same order (no deadlock).
  const toInsert = [...first.values()].sort(byKey);
  const outcome: BatchOutcome = { stored: new Map(), inserted: new Set() };
  try {
    await insertGroup(sql, toInsert, outcome);
  } catch (err) {
    if (toInsert.length === 1) throw err;
    const alone: Promise<void>[] = [];
    for (const p of toInsert) {
      alone.push(
        insertGroup(sql, [p], outcome).catch((e: unknown) => {
          p.request.reject(e);
          first.delete(p.key);
        }),
      );
    }
    await Promise.all(alone);
  }
  const { stored, inserted } = outcome;

  // Keys that were taken before this batch: read what is stored, once for all of them.
  const taken: EventKey[] = [];
  for (const p of first.values()) {
    if (!inserted.has(p.key))
      taken.push({ merchantId: p.event.merchantId, eventType: p.event.eventType, externalId: p.event.externalId });
  }
  if (taken.length > 0) {
    const rows = await findEventsByKeys(sql, taken);
    for (const row of rows) stored.set(keyOf(row.merchant_id, row.event_type, row.external_id), row);
  }

  for (const p of first.values()) answer(p, stored.get(p.key), inserted.has(p.key));
  for (const p of repeats) {
    if (first.has(p.key)) answer(p, stored.get(p.key), false);
    else p.request.reject(new Error('the first event of this key in its batch could not be inserted'));
  }
}

/** What a batch's inserts found: the stored row of each key, and the keys this batch inserted. */
interface BatchOutcome {
  stored: Map<string, ConversionEventRow>;
  inserted: Set<string>;
}

const byKey = (a: Prepared, b: Prepared) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** Inserts a group of the batch's events with their outbox rows (one statement) and notes what it inserted. */
async function insertGroup(sql: Sql, group: Prepared[], outcome: BatchOutcome): Promise<void> {
  const events = new Array<NewConversionEvent>(group.length);
  for (let i = 0; i < group.length; i++) events[i] = group[i]!.event;
  const rows = await inDatabaseSpan('insert conversion_events', () => insertEventsWithOutbox(sql, events));
  if (rows.length > 0) outboxCommitted(sql);
  const byId = new Map<string, ConversionEventRow>();
  for (const row of rows) byId.set(row.id, row);
  for (const p of group) {
    const row = byId.get(p.event.id);
    if (row) {
      outcome.stored.set(p.key, row);
      outcome.inserted.add(p.key);
    }
  }
}

function answer(p: Prepared, row: ConversionEventRow | undefined, inserted: boolean): void {
  const { request } = p;
  if (inserted) {
    request.log.info('conversion event recorded', {
      event_id: row!.id,
      attributed_by: row!.attributed_by,
      affiliate_id: row!.affiliate_id,
    });
    request.resolve({ outcome: 'created', body: presentEvent(row!) });
    return;
  }
  if (!row) {
    request.reject(new Error('conversion event vanished between conflict and read'));
    return;
  }
  if (!row.body_hash.equals(p.event.bodyHash)) {
    request.reject(
      new ApiError('CONFLICT', 'An event with this event_type and external_id was recorded with a different body', [
        { path: 'external_id', message: 'was already used for this event_type with a different body' },
      ]),
    );
    return;
  }
  request.resolve({ outcome: 'ok', body: presentEvent(row) });
}

/** The event a request asks to record, attributed and checked (throws ApiError for invalid input). */
function prepare(request: Request, found: Parameters<typeof settingsAndAttribution>[1]): Prepared {
  const { merchantId, body } = request;
  const { settings, attribution } = settingsAndAttribution(merchantId, found);
  const { amount, currency } = checkEvent(body, settings.currency);
  const payload = body.payload ?? {};
  const customerEmail = payload['customer_email'];
  return {
    request,
    key: keyOf(merchantId, body.event_type, body.external_id),
    event: {
      id: newId('evt'),
      merchantId,
      eventType: body.event_type,
      externalId: body.external_id,
      cookieId: body.cookie_id ?? null,
      coupon: body.coupon ?? null,
      amount,
      currency,
      payload,
      affiliateId: attribution.affiliateId,
      attributedBy: attribution.by,
      visitId: attribution.visit?.id ?? null,
      bodyHash: hashBody(body),
      messageId: newId('msg'),
      visit: conversionVisit(attribution.visit),
      customerEmail: typeof customerEmail === 'string' ? customerEmail : null,
      traceContext: request.trace ? carrierJson(carrierOf(request.trace)) : null,
    },
  };
}

/** The idempotency key of an event as one string: merchant ids and event types never contain NUL, so it is unambiguous. */
const keyOf = (merchantId: string, eventType: string, externalId: string) =>
  `${merchantId}\u0000${eventType}\u0000${externalId}`;
