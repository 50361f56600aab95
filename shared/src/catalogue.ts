import type { IdempotencyClaim } from './idempotent-reply.ts';
import type { ConsumerConfig, StreamConfig } from '@nats-io/jetstream';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  ReplayPolicy,
  RetentionPolicy,
  StorageType,
} from '@nats-io/jetstream';
import { Type, type Static } from '@sinclair/typebox';

/**
 * Every NATS subject and JetStream stream of the platform, in one place. `prefix` (NATS_PREFIX) is the first token
 * of every subject and, upper-cased, the start of every stream name, so environments and test files never meet.
 *
 * Message flow:
 *   gateway ──request/reply──▶ {prefix}.rpc.{service}.{operation}   (queue group = service name; one replica answers)
 *   any service's outbox relay ──▶ {prefix}.domain.{event type}   stream {PREFIX}_DOMAIN_EVENTS
 *     (Nats-Msg-Id = envelope id, so a re-published outbox row is stored once)
 *   events service's outbox relay ──▶ {prefix}.conversion.recorded   stream {PREFIX}_CONVERSIONS
 *     consumed by the commissions service (durable consumer "commissions")
 *   {PREFIX}_DOMAIN_EVENTS ──▶ dispatcher (durable consumer "dispatcher": fan-out into Postgres deliveries)
 *   dispatcher ──▶ {prefix}.webhook.attempt   stream {PREFIX}_WEBHOOK_ATTEMPTS (work queue of wake-up hints)
 *     consumed by every dispatcher replica (durable consumer "dispatcher-attempts"); see WEBHOOK_ATTEMPTS below
 *
 * Which process publishes and subscribes to what, and so each process's NATS user and permissions: nats-access.ts.
 * A new subject, stream or consumer here goes there too.
 */

// ---- request/reply ---------------------------------------------------------------------------------------------

/**
 * `payments` answers the platform payment API (/v1) and the hosted onboarding pages of its account links: its request
 * and reply shapes are in payments/rpc.ts (PaymentsRpcRequest, OnboardingRequest), its errors in payments/errors.ts.
 */
export const SERVICES = ['affiliates', 'events', 'commissions', 'dispatcher', 'payments'] as const;

/**
 * Service to service, for affiliate payouts with method `platform` (request/reply, types in payments/rpc.ts):
 *   commissions ──{prefix}.rpc.payments.affiliate_payout──▶ payments: the ledger transfer and payout (idempotent)
 *   payments ──{prefix}.rpc.commissions.platform_payout_settled──▶ commissions: paid or failed, until acknowledged
 */
export const PLATFORM_PAYOUT_SUBJECTS = {
  pay: (prefix: string) => rpcSubject(prefix, 'payments', 'affiliate_payout'),
  settled: (prefix: string) => rpcSubject(prefix, 'commissions', 'platform_payout_settled'),
};
export type ServiceName = (typeof SERVICES)[number];

export function rpcSubject(prefix: string, service: ServiceName, operation: string): string {
  return `${prefix}.rpc.${service}.${operation}`;
}

/** What the gateway sends. The merchant comes from the authenticated key, never from the caller's input. */
export interface RpcRequest {
  request_id: string;
  merchant_id: string;
  key_id: string;
  /** Epoch milliseconds after which the gateway has given up; a service drops work that arrives later. */
  deadline: number;
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  /** The Idempotency-Key's claim this request holds, when it carries one: the service keeps its reply on it. */
  idempotency?: IdempotencyClaim;
}

/**
 * What a service answers: the header `Outcome` is `ok`, `created`, `no_content` or `error`, and the data is the JSON
 * response body (for `error`, an RpcError; for `no_content`, empty). The gateway passes the bytes through and maps
 * outcome and error code to HTTP (`no_content` is 204 with no body).
 */
export const RPC_OUTCOME_HEADER = 'Outcome';
/** Set on an `ok` answer whose data is not JSON but text of this media type (an operation answering `text/csv`). */
export const RPC_CONTENT_TYPE_HEADER = 'Content-Type';
export type RpcOutcome = 'ok' | 'created' | 'no_content' | 'error';
export interface RpcError {
  code: string;
  message: string;
  details?: { path: string; message: string }[];
}

// ---- domain events ---------------------------------------------------------------------------------------------

export const DOMAIN_EVENT_TYPES = [
  'affiliate.created',
  'affiliate.approved',
  'affiliate.suspended',
  'affiliate.tier_promoted',
  'commission.created',
  'commission.approved',
  'commission.voided',
  'payout.sent',
  'payout.paid',
  'payout.failed',
  'fraud.flagged',
  'tax_form.submitted',
] as const;
export type DomainEventType = (typeof DOMAIN_EVENT_TYPES)[number];

/** The envelope published on the stream; the same object is a webhook's body. */
export interface DomainEvent<D = Record<string, unknown>, T extends OutboxEventType = DomainEventType> {
  id: string;
  type: T;
  created_at: string;
  merchant_id: string;
  data: D;
}

export function domainEventSubject(prefix: string, type: DomainEventType): string {
  return `${prefix}.domain.${type}`;
}

// ---- conversion events (internal: events service → commissions service) ----------------------------------------

export type ConversionEventType = 'conversion.recorded';

/** Everything the outbox carries: the twelve domain events (webhooks) and the internal conversion events. */
export type OutboxEventType = DomainEventType | ConversionEventType;

/** Data of `conversion.recorded`: the stored conversion event plus what attribution and fraud rules saw. */
export const ConversionRecordedSchema = Type.Object({
  event_id: Type.String({ description: 'evt_…' }),
  event_type: Type.String({ description: "the merchant's event type; `refund` voids the order's commissions" }),
  external_id: Type.String({ description: "the merchant's order id; commissions carry it as order_id" }),
  amount: Type.String({ description: 'exact decimal as text, e.g. "19.99"; "0" when the event had none' }),
  currency: Type.String({ description: 'ISO 4217, upper case (the merchant default when the event omitted it)' }),
  affiliate_id: Type.Union([Type.String(), Type.Null()]),
  attributed_by: Type.Union([Type.Literal('cookie'), Type.Literal('coupon'), Type.Null()]),
  visit: Type.Union([
    Type.Object({
      id: Type.String({ description: 'vis_…' }),
      ip_hash: Type.Union([Type.String(), Type.Null()]),
      fingerprint: Type.Union([Type.String(), Type.Null()]),
    }),
    Type.Null(),
  ]),
  customer_email: Type.Union([Type.String(), Type.Null()], {
    description: 'payload.customer_email when given (self-referral rule)',
  }),
  created_at: Type.String({ description: 'when the event was recorded' }),
});
export type ConversionRecorded = Static<typeof ConversionRecordedSchema>;

/**
 * A durable pull consumer: its service ensures it at start (created, or its settings brought in line) and every
 * replica of that service pulls from it, so each message is worked on by one replica at a time.
 */
export interface DurableConsumerEntry {
  stream: StreamKey;
  durable_name: string;
  description: string;
  filter_subject: (prefix: string) => string;
  /** Time a replica has to ack before the message goes to another (the work is one short transaction). */
  ack_wait_ms: number;
  /** -1: redeliver until acked. Failures are transient (database down); poison messages are terminated instead. */
  max_deliver: number;
  /** Unacknowledged messages in flight across all replicas. */
  max_ack_pending: number;
}

/**
 * The commissions service's consumer of `conversion.recorded`. Processing is idempotent (see
 * services/commissions/src/process.ts), so a redelivery after a crash between commit and ack changes nothing.
 * Messages the stream loses are processed from the outbox by the reconciler (reconcile.ts).
 */
export const COMMISSIONS_CONSUMER: DurableConsumerEntry = {
  stream: 'CONVERSIONS',
  durable_name: 'commissions',
  description: 'commissions service: conversion.recorded → commissions, revenue, tiers, fraud flags',
  filter_subject: (prefix) => `${prefix}.conversion.recorded`,
  ack_wait_ms: 15_000,
  max_deliver: -1,
  max_ack_pending: 1000,
};

/** `replicas`: the consumer's num_replicas (JETSTREAM_REPLICAS, resolved by jetstream-replicas.ts). */
export function durableConsumerConfig(
  prefix: string,
  entry: DurableConsumerEntry,
  replicas: number,
): Partial<ConsumerConfig> & { durable_name: string } {
  return {
    durable_name: entry.durable_name,
    description: entry.description,
    filter_subject: entry.filter_subject(prefix),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    replay_policy: ReplayPolicy.Instant,
    ack_wait: entry.ack_wait_ms * 1e6, // nanoseconds
    max_deliver: entry.max_deliver,
    max_ack_pending: entry.max_ack_pending,
    num_replicas: replicas,
  };
}

/** The subject an outbox row is published on. */
export function outboxSubject(prefix: string, type: OutboxEventType): string {
  return type.startsWith('conversion.') ? `${prefix}.${type}` : domainEventSubject(prefix, type as DomainEventType);
}

export type StreamKey = 'DOMAIN_EVENTS' | 'CONVERSIONS' | 'WEBHOOK_ATTEMPTS';

export function streamName(prefix: string, stream: StreamKey): string {
  return `${prefix.toUpperCase()}_${stream}`;
}

/** `replicas`: every stream's num_replicas (JETSTREAM_REPLICAS, resolved by jetstream-replicas.ts). */
export function streamConfigs(prefix: string, replicas: number): (Partial<StreamConfig> & { name: string })[] {
  return [
    {
      name: streamName(prefix, 'DOMAIN_EVENTS'),
      subjects: [`${prefix}.domain.>`],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_age: 7 * 24 * 3600 * 1e9, // nanoseconds; Postgres keeps the history, the stream is transport
      // Long enough to cover a relay that crashed after publishing and before marking the row, then restarted.
      duplicate_window: 10 * 60 * 1e9,
      num_replicas: replicas,
    },
    {
      name: streamName(prefix, 'CONVERSIONS'),
      subjects: [`${prefix}.conversion.>`],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_age: 7 * 24 * 3600 * 1e9,
      duplicate_window: 10 * 60 * 1e9,
      num_replicas: replicas,
    },
    {
      // Hints only ("delivery dlv_… may be due"): losing or purging them delays nothing for long, because the
      // dispatcher's sweeper re-publishes every due, unleased delivery from Postgres.
      name: streamName(prefix, 'WEBHOOK_ATTEMPTS'),
      subjects: [webhookAttemptSubject(prefix)],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_age: 24 * 3600 * 1e9,
      duplicate_window: 2 * 60 * 1e9,
      num_replicas: replicas,
    },
  ];
}

// ---- webhook dispatch ------------------------------------------------------------------------------------------

/**
 * Outbound webhooks (dispatcher service; docs/WEBHOOKS.md). Delivery state lives in Postgres; JetStream carries
 * events in and wake-up hints, and no message is ever held back with a delayed nak:
 *
 * - DISPATCHER_FANOUT_CONSUMER on DOMAIN_EVENTS: inserts the message (its body bytes fixed once) and one delivery per
 *   enabled, subscribed endpoint in one transaction (ON CONFLICT DO NOTHING, so redelivery is harmless), then acks.
 *   No backoff array, unlimited max_deliver: a failing database is retried, never dropped.
 * - DISPATCHER_ATTEMPTS_CONSUMER on WEBHOOK_ATTEMPTS: a hint names a delivery. The replica claims the row with a lease
 *   (UPDATE … WHERE due AND not leased AND the endpoint is under its concurrency limit), acks the hint at once, then
 *   attempts and writes the outcome and the next attempt time to Postgres. Acking before the HTTP call keeps slow
 *   endpoints out of max_ack_pending (nats-server#6093: held messages count against it and stall everyone), and the
 *   lease, not the message, guarantees that no two replicas attempt one delivery at the same time.
 * - Per-message backoff is the delivery's next_attempt_at in Postgres: a sweeper in every replica re-publishes hints
 *   for deliveries that are due, unleased and not recently hinted. That one mechanism covers scheduled retries,
 *   hints lost to a crash or unflushed fsync, messages dropped after max_deliver, and a purged stream.
 */
export const DISPATCHER_FANOUT_CONSUMER: DurableConsumerEntry = {
  stream: 'DOMAIN_EVENTS',
  durable_name: 'dispatcher',
  description: 'dispatcher: domain events → webhook messages and deliveries in Postgres',
  filter_subject: (prefix) => `${prefix}.domain.>`,
  ack_wait_ms: 30_000,
  max_deliver: -1,
  max_ack_pending: 1000,
};

export const DISPATCHER_ATTEMPTS_CONSUMER: DurableConsumerEntry = {
  stream: 'WEBHOOK_ATTEMPTS',
  durable_name: 'dispatcher-attempts',
  description: 'dispatcher: hints naming a due delivery; acked once the delivery is claimed (or found not claimable)',
  filter_subject: (prefix) => webhookAttemptSubject(prefix),
  ack_wait_ms: 30_000,
  max_deliver: -1,
  max_ack_pending: 10_000,
};

export function webhookAttemptSubject(prefix: string): string {
  return `${prefix}.webhook.attempt`;
}

/** The body of a hint on WEBHOOK_ATTEMPTS. */
export interface WebhookAttemptHint {
  delivery_id: string;
}

// ---- public referral tracking (gateway → events service) ------------------------------------------------------

/**
 * Referral links and the tracking script carry no API key: the gateway answers /r/… and /t/… itself and asks the
 * events service by request/reply (queue group "events"). Replies carry the RPC `Outcome` header: `created` (a new
 * visit), `ok` (the browser's current visit was reused) or `error` with an RpcError.
 *   referral: GET /r/{merchant_id}/{slug}, or GET /r/{slug} on a merchant's tracking host → visit, then redirect
 *   visit:    POST /t/visit from the tracking script on the merchant's site → visit
 */
export type TrackingOperation = 'referral' | 'visit';

export function trackingSubject(prefix: string, operation: TrackingOperation): string {
  return `${prefix}.tracking.${operation}`;
}

/**
 * What the gateway saw of the browser. The events service stores only an HMAC of the IP, and logs neither; from the
 * rest it keeps the referrer's host, the country code and the class of device (services/events/src/domain/clicks.ts).
 */
export interface TrackingClient {
  ip: string | null;
  user_agent: string | null;
  /** The Referer header of a referral link's request; null on POST /t/visit, whose body reports the page's referrer. */
  referrer: string | null;
  /** The value of the GEO_COUNTRY_HEADER header as sent, unchecked; null when that setting is unset or it is absent. */
  country: string | null;
}

export interface TrackReferralRequest {
  request_id: string;
  /** Epoch milliseconds after which the gateway has given up. */
  deadline: number;
  /** The merchant named in the path (/r/{merchant_id}/{slug}), or the Host that /r/{slug} was asked on. */
  merchant: { id: string } | { host: string };
  slug: string;
  /** The `_svc_sess` cookie the browser already sent on this host, if any. */
  current_visit_id: string | null;
  client: TrackingClient;
}

export interface TrackReferralReply {
  visit_id: string;
  max_age_seconds: number;
  /** The merchant's landing page with ?via={slug}. */
  redirect_url: string;
}

export interface TrackVisitRequest {
  request_id: string;
  deadline: number;
  /** The POST /t/visit body as sent; the events service validates it (schemas/tracking.ts TrackVisitBody). */
  body: unknown;
  client: TrackingClient;
}
