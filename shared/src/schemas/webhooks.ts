import { Type, type Static } from '@sinclair/typebox';
import { DOMAIN_EVENT_TYPES } from '../catalogue.ts';
import { Cursor, Limit, ListOf, NullableTimestamp, Timestamp } from './common.ts';

const EndpointIdExample = 'we_01jd3t6m0s2e4w5x6y7z8a9b0c';

export const WebhookEventType = Type.Union(
  DOMAIN_EVENT_TYPES.map((t) => Type.Literal(t)),
  { description: 'one of the twelve event types', examples: ['commission.approved'] },
);

const EventTypes = Type.Array(WebhookEventType, {
  minItems: 1,
  maxItems: DOMAIN_EVENT_TYPES.length,
  uniqueItems: true,
  description: 'the event types sent to this endpoint; all twelve when omitted on create',
  examples: [['affiliate.created', 'commission.approved']],
});

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'where events are POSTed: https, resolving only to public addresses (no loopback, private, link-local or metadata ranges)',
  examples: ['https://hooks.example.com/affiliates'],
});

const Description = Type.String({
  maxLength: 500,
  description: 'a note for your team',
  examples: ['Production CRM sync'],
});

const FailureThreshold = Type.Integer({
  minimum: 1,
  maximum: 100,
  description: 'consecutive failed attempts after which the endpoint is disabled (default 15)',
  examples: [15],
});

const Secret = Type.String({
  pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
  description: 'the signing secret (Standard Webhooks): shown on create and rotate only; store it safely',
  examples: ['whsec_3pQ+7wKx/Zd1+Rq9/Lm4+Tv8/Ab2+Cd6/Ef0+Gh5/Jk8='],
});

const endpointFields = {
  id: Type.String({ description: 'identifier', examples: [EndpointIdExample] }),
  url: Url,
  description: Description,
  event_types: EventTypes,
  enabled: Type.Boolean({ description: 'false: no new deliveries; due ones are dead-lettered for later replay' }),
  disabled_reason: Type.Union(
    [Type.Literal('manual'), Type.Literal('gone'), Type.Literal('failure_threshold'), Type.Null()],
    {
      description: 'why the endpoint is disabled: by you (manual), a 410 response (gone), or consecutive failures',
    },
  ),
  failure_threshold: FailureThreshold,
  consecutive_failures: Type.Integer({
    minimum: 0,
    description: 'failed attempts since the last success; reset by a success or re-enabling',
  }),
  last_success_at: NullableTimestamp('when a delivery last succeeded'),
  created_at: Timestamp('creation time'),
  updated_at: Timestamp('last change'),
};

export const WebhookEndpoint = Type.Object(endpointFields, { additionalProperties: false, $id: 'WebhookEndpoint' });
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

export const WebhookEndpointWithSecret = Type.Object(
  { ...endpointFields, secret: Secret },
  {
    additionalProperties: false,
    $id: 'WebhookEndpointWithSecret',
    description: 'the endpoint and its signing secret, shown this once',
  },
);

export const WebhookEndpointList = ListOf(WebhookEndpoint, 'WebhookEndpointList');

export const ListWebhookEndpointsQuery = Type.Object(
  { cursor: Type.Optional(Cursor), limit: Type.Optional(Limit) },
  { additionalProperties: false },
);

export const WebhookEndpointIdParams = Type.Object(
  { endpoint_id: Type.String({ description: 'a webhook endpoint id', examples: [EndpointIdExample] }) },
  { additionalProperties: false },
);

export const WebhookDeliveryIdParams = Type.Object(
  { delivery_id: Type.String({ description: 'a delivery id', examples: ['dlv_01jd3t6m0s2e4w5x6y7z8a9b0c'] }) },
  { additionalProperties: false },
);

export const CreateWebhookEndpointBody = Type.Object(
  {
    url: Url,
    description: Type.Optional(Description),
    event_types: Type.Optional(EventTypes),
    enabled: Type.Optional(Type.Boolean({ description: 'default true' })),
    failure_threshold: Type.Optional(FailureThreshold),
  },
  { additionalProperties: false, $id: 'CreateWebhookEndpoint' },
);
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBody>;

export const UpdateWebhookEndpointBody = Type.Object(
  {
    url: Type.Optional(Url),
    description: Type.Optional(Description),
    event_types: Type.Optional(EventTypes),
    enabled: Type.Optional(
      Type.Boolean({ description: 'true re-enables the endpoint and resets consecutive_failures' }),
    ),
    failure_threshold: Type.Optional(FailureThreshold),
  },
  { additionalProperties: false, minProperties: 1, $id: 'UpdateWebhookEndpoint' },
);
export type UpdateWebhookEndpointBody = Static<typeof UpdateWebhookEndpointBody>;

export const SendTestEventBody = Type.Object(
  { event_type: WebhookEventType },
  { additionalProperties: false, $id: 'SendWebhookTestEvent' },
);

export const WebhookAttempt = Type.Object(
  {
    attempted_at: Timestamp('when the request was sent'),
    status_code: Type.Union([Type.Integer(), Type.Null()], {
      description: 'the response status; null when none arrived',
      examples: [500],
    }),
    error: Type.Union([Type.String(), Type.Null()], {
      description: 'timeout, network error or refused address when no response arrived',
      examples: [null],
    }),
    duration_ms: Type.Integer({ minimum: 0, description: 'time until the response (or the error)', examples: [132] }),
    response_body: Type.String({ description: 'the first KiB of the response body', examples: ['{"ok":false}'] }),
  },
  { additionalProperties: false, $id: 'WebhookAttempt' },
);

export const DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'dead_lettered'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const WebhookDelivery = Type.Object(
  {
    id: Type.String({
      description: 'identifier of this message’s delivery to this endpoint',
      examples: ['dlv_01jd3t6m0s2e4w5x6y7z8a9b0c'],
    }),
    message_id: Type.String({
      description: 'the envelope id and webhook-id header (the same on every attempt and replay)',
      examples: ['msg_01jd3t6m0s2e4w5x6y7z8a9b0c'],
    }),
    endpoint_id: Type.String({ examples: [EndpointIdExample] }),
    event_type: WebhookEventType,
    status: Type.Union(
      DELIVERY_STATUSES.map((s) => Type.Literal(s)),
      {
        description: 'pending → succeeded, or retrying (429, 5xx, timeouts) → succeeded or dead_lettered',
      },
    ),
    attempt_count: Type.Integer({
      minimum: 0,
      description: 'attempts in the current series (at most 10; a replay starts a new one)',
    }),
    next_attempt_at: NullableTimestamp('when the next attempt is due; null once succeeded or dead-lettered'),
    dead_letter_reason: Type.Union(
      [
        Type.Literal('client_error'),
        Type.Literal('gone'),
        Type.Literal('max_attempts'),
        Type.Literal('endpoint_disabled'),
        Type.Null(),
      ],
      { description: 'why it was dead-lettered: a 4xx, a 410, ten failed attempts, or the endpoint being disabled' },
    ),
    created_at: Timestamp('when the event was fanned out to this endpoint'),
    updated_at: Timestamp('last change'),
    attempts: Type.Array(WebhookAttempt, { description: 'every attempt, oldest first' }),
  },
  { additionalProperties: false, $id: 'WebhookDelivery' },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookDeliveryLog = Type.Object(
  { data: Type.Array(WebhookDelivery, { description: 'the last 100 deliveries (or `limit`), newest first' }) },
  { additionalProperties: false, $id: 'WebhookDeliveryLog' },
);

export const ListWebhookDeliveriesQuery = Type.Object(
  {
    status: Type.Optional(
      Type.Union(
        DELIVERY_STATUSES.map((s) => Type.Literal(s)),
        { description: 'only deliveries in this state' },
      ),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        default: 100,
        description: 'how many, 1 to 100 (default 100)',
        examples: [100],
      }),
    ),
  },
  { additionalProperties: false },
);

export const ReplayRangeBody = Type.Object(
  {
    since: Timestamp('replay dead-lettered deliveries created at or after this time'),
    until: Timestamp('…and before this time'),
  },
  { additionalProperties: false, $id: 'ReplayWebhookDeliveries' },
);

export const ReplayResult = Type.Object(
  {
    replayed: Type.Integer({
      minimum: 0,
      description: 'how many deliveries were scheduled for a new attempt',
      examples: [3],
    }),
  },
  { additionalProperties: false, $id: 'WebhookReplayResult' },
);
