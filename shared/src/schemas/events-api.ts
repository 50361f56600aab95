import { Type, type Static } from '@sinclair/typebox';
import { AffiliateIdFilter, CreatedRange, Cursor, Limit, ListOf, Timestamp } from './common.ts';

/** POST /api/v1/events: conversion events sent by the merchant's backend, and the stored event it answers with. */

export const EVENT_PAYLOAD_MAX_BYTES = 16 * 1024;
/** Amounts stay below this so that every accepted JSON number is an exact decimal of at most 15 significant digits. */
const EVENT_AMOUNT_LIMIT = 1e12;

const EventType = Type.String({
  pattern: '^[a-z][a-z0-9_.]{0,63}$',
  description: 'what happened, in lower case; `refund` voids the commissions of the order with the same external_id',
  examples: ['purchase', 'trial_started', 'refund'],
});

const ExternalId = Type.String({
  minLength: 1,
  maxLength: 255,
  description:
    'your own identifier of the order or subscription. With event_type it makes the request idempotent: the same ' +
    'body again answers 200 with the stored event, a different body answers 409 CONFLICT',
  examples: ['order_1042'],
});

const CookieId = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'the value of the `_svc_sess` cookie set by the referral link or the tracking script (a visit id)',
  examples: ['vis_01jd3t6m0s2e4w5x6y7z8a9b0c'],
});

const Coupon = Type.String({
  minLength: 1,
  maxLength: 255,
  description: "the coupon code the customer used, matched case-insensitively against the merchant's coupons",
  examples: ['JANE10'],
});

const Currency = Type.String({
  pattern: '^[A-Z]{3}$',
  description: "ISO 4217 code in upper case; defaults to the merchant's currency setting",
  examples: ['USD'],
});

const Payload = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'free-form data, at most 16 KiB as JSON. `customer_email` (a string), when present, lets fraud rules detect self-referrals',
  examples: [{ customer_email: 'buyer@example.com', plan: 'pro' }],
});

export const RecordEventBody = Type.Object(
  {
    event_type: EventType,
    external_id: ExternalId,
    cookie_id: Type.Optional(CookieId),
    coupon: Type.Optional(Coupon),
    amount: Type.Optional(
      Type.Number({
        minimum: 0,
        exclusiveMaximum: EVENT_AMOUNT_LIMIT,
        description: 'order value, 0 when absent; no more decimals than the currency allows (JPY 0, USD 2, KWD 3)',
        examples: [49.99],
      }),
    ),
    currency: Type.Optional(Currency),
    payload: Type.Optional(Payload),
  },
  {
    additionalProperties: false,
    $id: 'RecordEvent',
    description:
      'At least one of cookie_id and coupon is required, except on a refund, which names its order by external_id alone.',
  },
);
export type RecordEventBody = Static<typeof RecordEventBody>;

export const ATTRIBUTION_METHODS = ['cookie', 'coupon'] as const;
export type AttributionMethod = (typeof ATTRIBUTION_METHODS)[number];

export const ConversionEvent = Type.Object(
  {
    id: Type.String({ description: 'identifier', examples: ['evt_01jd3t6m0s2e4w5x6y7z8a9b0c'] }),
    event_type: EventType,
    external_id: ExternalId,
    cookie_id: Type.Union([CookieId, Type.Null()], { description: 'as sent, or null' }),
    coupon: Type.Union([Coupon, Type.Null()], { description: 'as sent, or null' }),
    amount: Type.Number({ minimum: 0, description: 'order value as sent (0 when absent)', examples: [49.99] }),
    currency: Currency,
    payload: Payload,
    affiliate_id: Type.Union([Type.String(), Type.Null()], {
      description:
        'the affiliate credited, or null when nothing matched (the event is still stored). Only an affiliate whose ' +
        'status is approved when the event arrives is credited; a cookie or coupon of a pending or suspended ' +
        'affiliate does not match',
      examples: ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c'],
    }),
    attributed_by: Type.Union([...ATTRIBUTION_METHODS.map((m) => Type.Literal(m)), Type.Null()], {
      description:
        '`cookie` when cookie_id names a visit of this merchant made within the attribution window; else `coupon` ' +
        'when the coupon is one of an affiliate; the cookie wins when both match; null when neither does',
      examples: ['cookie'],
    }),
    created_at: Timestamp('when the event was first recorded'),
  },
  { additionalProperties: false, $id: 'ConversionEvent' },
);
export type ConversionEvent = Static<typeof ConversionEvent>;

/** The most commissions one event yields: the direct affiliate's (level 0) and one for each of up to 5 ancestors. */
export const COMMISSIONS_PER_EVENT_MAX = 6;

const Attribution = Type.Union(
  [
    Type.Object(
      {
        method: Type.Union(
          ATTRIBUTION_METHODS.map((m) => Type.Literal(m)),
          {
            description:
              'how the affiliate was credited: by the referral cookie (`cookie`) or by the coupon (`coupon`)',
            examples: ['cookie'],
          },
        ),
        click_id: Type.Union([Type.String(), Type.Null()], {
          description: 'the click (GET /api/v1/clicks/{click_id}) whose cookie credited it; null for a coupon',
          examples: ['vis_01jd3t6m0s2e4w5x6y7z8a9b0c'],
        }),
        coupon: Type.Union([Type.String(), Type.Null()], {
          description: 'the coupon code that credited it, as sent; null for a cookie',
          examples: [null],
        }),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  {
    description: 'how the event was attributed, or null when nothing matched (then affiliate_id is null too)',
    examples: [{ method: 'cookie', click_id: 'vis_01jd3t6m0s2e4w5x6y7z8a9b0c', coupon: null }],
  },
);

/** GET /api/v1/events/{event_id} and the list: the stored event as POST answers it, with its attribution and commissions. */
export const StoredConversionEvent = Type.Object(
  {
    ...ConversionEvent.properties,
    attribution: Attribution,
    commission_ids: Type.Array(Type.String(), {
      maxItems: COMMISSIONS_PER_EVENT_MAX,
      description:
        "the ids of the event's commissions, the direct affiliate's first and then each ancestor's by level; empty " +
        'while the commissions service has not yet processed the event (it does so moments after it is recorded), and ' +
        'for an event that earns none (no affiliate, a refund, a commission rule that pays nothing)',
      examples: [['com_01jd3t6m0s2e4w5x6y7z8a9b0c']],
    }),
  },
  {
    additionalProperties: false,
    $id: 'StoredConversionEvent',
    description: 'A conversion event as stored: every field of the POST /api/v1/events answer, and more',
  },
);
export type StoredConversionEvent = Static<typeof StoredConversionEvent>;

export const StoredConversionEventList = ListOf(StoredConversionEvent, 'StoredConversionEventList');

export const ListEventsQuery = Type.Object(
  {
    affiliate_id: AffiliateIdFilter('only events credited to this affiliate'),
    event_type: Type.Optional(EventType),
    external_id: Type.Optional(ExternalId),
    ...CreatedRange('events'),
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);

export const EventIdParams = Type.Object(
  { event_id: Type.String({ description: 'an event id', examples: ['evt_01jd3t6m0s2e4w5x6y7z8a9b0c'] }) },
  { additionalProperties: false },
);
