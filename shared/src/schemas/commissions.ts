import { Type, type Static } from '@sinclair/typebox';
import { Cursor, Limit, ListOf, NullableTimestamp, Timestamp } from './common.ts';

export const COMMISSION_STATUSES = ['pending', 'approved', 'paid', 'voided'] as const;
export type CommissionStatus = (typeof COMMISSION_STATUSES)[number];

const CommissionStatusSchema = Type.Union(
  COMMISSION_STATUSES.map((s) => Type.Literal(s)),
  {
    description:
      'pending → approved (by hand, or when the hold period ends), pending or approved → voided, approved → paid',
    examples: ['approved'],
  },
);

const AffiliateIdFilter = Type.String({
  pattern: '^aff_[0-9a-hjkmnp-tv-z]{26}$',
  description: 'only commissions earned by this affiliate',
  examples: ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c'],
});

/** The public commission: an explicit allowlist of fields. */
export const Commission = Type.Object(
  {
    id: Type.String({ description: 'identifier', examples: ['com_01jd3t6m0s2e4w5x6y7z8a9b0c'] }),
    amount: Type.Number({
      description: "commission amount, rounded half-even to the currency's minor unit",
      examples: [12.5],
    }),
    currency: Type.String({
      pattern: '^[A-Z]{3}$',
      description: "ISO 4217 code: the conversion event's currency",
      examples: ['USD'],
    }),
    status: CommissionStatusSchema,
    order_id: Type.String({ description: "the conversion event's external_id", examples: ['order_1042'] }),
    affiliate_id: Type.String({
      description: 'the affiliate who earns it',
      examples: ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c'],
    }),
    event_id: Type.String({
      description: 'the conversion event it was computed from',
      examples: ['evt_01jd3t6m0s2e4w5x6y7z8a9b0c'],
    }),
    level: Type.Integer({
      minimum: 0,
      maximum: 5,
      description: "0 for the event's own affiliate; 1 to 5 for its ancestors (1 is the parent)",
      examples: [0],
    }),
    rate: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
      description:
        'level 0: the fraction of the event amount (null for a flat-amount rule); level 1 to 5: the level rate, a fraction of the level 0 commission',
      examples: [0.1],
    }),
    created_at: Timestamp('creation time'),
    approved_at: NullableTimestamp('when it was approved; null until then'),
    voided_at: NullableTimestamp('when it was voided; null unless voided'),
    void_reason: Type.Union([Type.String(), Type.Null()], {
      description: '`refund`, `fraud`, or the reason given when it was voided by hand; null unless voided',
      examples: [null],
    }),
    void_requested_at: NullableTimestamp(
      'when a refund or void arrived while its payout was frozen (sending, sent, or exported): it stays as it is until that payout fails or is canceled (then voided) or is paid (then voided and clawed back); null otherwise',
    ),
    clawback: Type.Union(
      [
        Type.Object(
          {
            payout_id: Type.String({
              description: 'the paid payout that carried it',
              examples: ['po_01jd3t6m0s2e4w5x6y7z8a9b0c'],
            }),
            amount: Type.Number({ description: 'the amount to take back, in its currency', examples: [12.5] }),
            recovered: Type.Number({
              description:
                'how much later payouts have deducted so far (payouts that failed or were canceled not counted)',
              examples: [12.5],
            }),
            created_at: Timestamp('when it was voided after being paid'),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      {
        description:
          "money paid for it that is taken back from the affiliate's next payouts in the same currency, because it was voided (a refund) after its payout was paid; null otherwise",
        examples: [null],
      },
    ),
  },
  { additionalProperties: false, $id: 'Commission' },
);
export type Commission = Static<typeof Commission>;

export const CommissionList = ListOf(Commission, 'CommissionList');

export const ListCommissionsQuery = Type.Object(
  {
    affiliate_id: Type.Optional(AffiliateIdFilter),
    status: Type.Optional(CommissionStatusSchema),
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);

export const CommissionIdParams = Type.Object(
  { commission_id: Type.String({ description: 'a commission id', examples: ['com_01jd3t6m0s2e4w5x6y7z8a9b0c'] }) },
  { additionalProperties: false },
);

export const UpdateCommissionBody = Type.Object(
  {
    status: Type.Union(
      COMMISSION_STATUSES.map((s) => Type.Literal(s)),
      {
        description:
          'approve a pending commission, or void a pending or approved one; any other move is 409 CONFLICT (approved → paid belongs to payouts)',
        examples: ['voided'],
      },
    ),
    void_reason: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'why it is voided (only with status voided; default `manual`)',
        examples: ['order cancelled'],
      }),
    ),
  },
  { additionalProperties: false, $id: 'UpdateCommission' },
);
export type UpdateCommissionBody = Static<typeof UpdateCommissionBody>;
