import { Type, type Static } from '@sinclair/typebox';

export const ANALYTICS_TIME_GROUPINGS = ['day', 'week', 'month'] as const;
export const ANALYTICS_DIMENSIONS = [
  'affiliate',
  'coupon',
  'country',
  'referrer',
  'landing_page',
  'device',
  'event_type',
] as const;
export type AnalyticsTimeGrouping = (typeof ANALYTICS_TIME_GROUPINGS)[number];
export type AnalyticsDimension = (typeof ANALYTICS_DIMENSIONS)[number];
export type AnalyticsGrouping = AnalyticsTimeGrouping | AnalyticsDimension;

const Instant = (description: string, example: string) =>
  Type.String({ format: 'date-time', description, examples: [example] });

const Decimal = (description: string, example: string) =>
  Type.String({ pattern: '^-?(0|[1-9][0-9]*)(\\.[0-9]+)?$', description, examples: [example] });

export const AnalyticsQuery = Type.Object(
  {
    group_by: Type.Optional(
      Type.Union(
        [...ANALYTICS_TIME_GROUPINGS, ...ANALYTICS_DIMENSIONS].map((g) => Type.Literal(g)),
        {
          description:
            'day (default), week (from Monday) or month buckets in `timezone`, every bucket present; or the top `limit` values of a dimension by conversions',
          examples: ['day'],
        },
      ),
    ),
    start: Type.Optional(
      Instant('first instant counted, ISO 8601 with an offset (default: 30 days before `end`)', '2026-10-01T00:00:00Z'),
    ),
    end: Type.Optional(
      Instant(
        'instant the range stops before, ISO 8601 (default: now); at most 2 years after `start`',
        '2026-11-01T00:00:00Z',
      ),
    ),
    timezone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'IANA time zone of the day, week and month buckets (default UTC)',
        examples: ['Europe/Paris'],
      }),
    ),
    affiliate_id: Type.Optional(
      Type.String({
        pattern: '^aff_[0-9a-hjkmnp-tv-z]{26}$',
        description: "only this affiliate's clicks, conversions and commissions",
        examples: ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c'],
      }),
    ),
    currency: Type.Optional(
      Type.String({
        pattern: '^[A-Z]{3}$',
        description: "ISO 4217 code revenue and commissions are summed in (default: the merchant's currency)",
        examples: ['USD'],
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        description: 'for a dimension, how many of its top values by conversions (default 25, at most 100)',
        examples: [25],
      }),
    ),
  },
  { additionalProperties: false },
);
export type AnalyticsQuery = Static<typeof AnalyticsQuery>;

const Measures = {
  clicks: Type.Integer({ minimum: 0, description: 'referral clicks, bots excluded', examples: [1250] }),
  conversions: Type.Integer({
    description: 'conversion events other than refunds, in every currency',
    examples: [42],
  }),
  revenue: Decimal("sum of the conversions' amounts in `currency`, refunds subtracted; exact decimal", '4180.50'),
  commissions: Decimal('sum of the commissions created, less those voided, in `currency`; exact decimal', '418.05'),
};

export const AnalyticsRow = Type.Object(
  {
    key: Type.Union([Type.String(), Type.Null()], {
      description:
        "a time bucket's start in `timezone` (ISO 8601 with its offset), or the dimension's value: an affiliate id, coupon code (upper case), ISO 3166 country, referring host, landing page without query or fragment, device class or event type; null for none (unattributed, unknown)",
      examples: ['2026-10-01T00:00:00+02:00'],
    }),
    display_name: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: "group_by=affiliate only: the affiliate's display name",
        examples: ['Jane Doe'],
      }),
    ),
    ...Measures,
  },
  { additionalProperties: false, $id: 'AnalyticsRow' },
);
export type AnalyticsRow = Static<typeof AnalyticsRow>;

export const AnalyticsOtherCurrency = Type.Object(
  {
    currency: Type.String({ description: 'ISO 4217 code', examples: ['EUR'] }),
    conversions: Measures.conversions,
    revenue: Decimal('revenue in this currency over the whole range', '120.00'),
    commissions: Decimal('commissions in this currency over the whole range', '12.00'),
  },
  { additionalProperties: false, $id: 'AnalyticsOtherCurrency' },
);

export const Analytics = Type.Object(
  {
    object: Type.Literal('analytics'),
    group_by: Type.String({ description: 'the grouping used', examples: ['day'] }),
    start: Instant('first instant counted', '2026-10-01T00:00:00.000Z'),
    end: Instant('instant the range stops before', '2026-11-01T00:00:00.000Z'),
    timezone: Type.String({ description: 'time zone of the buckets', examples: ['Europe/Paris'] }),
    currency: Type.String({ description: 'currency of revenue and commissions', examples: ['USD'] }),
    data: Type.Array(AnalyticsRow, {
      description: 'time groupings: every bucket, oldest first; dimensions: the top values, most conversions first',
    }),
    other_currencies: Type.Array(AnalyticsOtherCurrency, {
      description: 'conversions in other currencies over the range, not converted; their count is in `conversions` too',
    }),
  },
  {
    additionalProperties: false,
    $id: 'Analytics',
    examples: [
      {
        object: 'analytics',
        group_by: 'day',
        start: '2026-10-01T00:00:00.000Z',
        end: '2026-10-03T00:00:00.000Z',
        timezone: 'UTC',
        currency: 'USD',
        data: [
          { key: '2026-10-01T00:00:00+00:00', clicks: 120, conversions: 4, revenue: '396.00', commissions: '39.60' },
          { key: '2026-10-02T00:00:00+00:00', clicks: 0, conversions: 0, revenue: '0.00', commissions: '0.00' },
        ],
        other_currencies: [{ currency: 'EUR', conversions: 1, revenue: '49.00', commissions: '4.90' }],
      },
    ],
  },
);
export type Analytics = Static<typeof Analytics>;
