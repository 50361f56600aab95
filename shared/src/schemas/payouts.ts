import { Type, type Static } from '@sinclair/typebox';
import { Cursor, Limit, ListOf, NullableTimestamp, Timestamp } from './common.ts';

export const PAYOUT_STATUSES = ['pending', 'sending', 'sent', 'paid', 'failed', 'canceled'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/**
 * The most ids a payout carries in `commission_ids` (its answers, list pages and payout.* webhooks): what grows with a
 * merchant's data never travels whole in one message. listPayoutCommissions pages through all of them.
 */
export const PAYOUT_COMMISSION_IDS_MAX = 50;
/** How many of a payout's adjustments its answers and webhooks list, oldest first: the rest are counted. */
export const PAYOUT_ADJUSTMENTS_MAX = 50;

/** Why a payout may not be sent yet. */
export type HeldReason = 'tax_form_required';

const PayoutStatusSchema = Type.Union(
  PAYOUT_STATUSES.map((s) => Type.Literal(s)),
  {
    description:
      'pending → sent → paid or failed; pending → canceled. `sending`: a payout with method platform whose payment the payment service is making (pending → sending → sent); it cannot be canceled',
    examples: ['pending'],
  },
);

const AffiliateId = (description: string) =>
  Type.String({
    pattern: '^aff_[0-9a-hjkmnp-tv-z]{26}$',
    description,
    examples: ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c'],
  });

const Method = Type.Union([Type.Literal('manual'), Type.Literal('platform')], {
  description:
    "`manual`: paid outside the platform (a bank transfer, or a PayPal Payouts batch from the CSV export); `platform`: paid through the platform payment API from the merchant's connected account, its status then following the ledger payout (the reference)",
  examples: ['manual'],
});

/** The public payout: an explicit allowlist of fields. */
export const Payout = Type.Object(
  {
    id: Type.String({ description: 'identifier', examples: ['po_01jd3t6m0s2e4w5x6y7z8a9b0c'] }),
    affiliate_id: Type.String({ description: 'the affiliate paid', examples: ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c'] }),
    amount: Type.Number({
      description:
        'what it pays: the exact sum of its commissions (those voided while it was pending excepted) less its adjustments, in the currency of its commissions; never below zero',
      examples: [182.5],
    }),
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code', examples: ['USD'] }),
    status: PayoutStatusSchema,
    method: Type.Union([Method, Type.Null()], { description: 'how it was sent; null until then', examples: [null] }),
    reference: Type.Union([Type.String(), Type.Null()], {
      description: "the merchant's reference of the transfer, given when it was marked sent",
      examples: ['PAYPAL-BATCH-2026-11'],
    }),
    commission_ids: Type.Array(Type.String(), {
      description: `the commissions it grouped, as its history: one voided while the payout was pending stays listed (its status tells) but no longer counts in amount; at most the first ${PAYOUT_COMMISSION_IDS_MAX}, by id (commission_count counts them all; GET /api/v1/payouts/{payout_id}/commissions pages through every one)`,
      maxItems: PAYOUT_COMMISSION_IDS_MAX,
      examples: [['com_01jd3t6m0s2e4w5x6y7z8a9b0c']],
    }),
    commission_count: Type.Integer({
      minimum: 0,
      description: 'how many commissions it holds: every one listed by GET /api/v1/payouts/{payout_id}/commissions',
      examples: [1],
    }),
    period_start: Timestamp('creation time of its earliest commission'),
    period_end: Timestamp('creation time of its latest commission'),
    created_at: Timestamp('creation time'),
    sent_at: NullableTimestamp('when it was marked sent'),
    paid_at: NullableTimestamp('when it was marked paid'),
    failed_at: NullableTimestamp('when it was marked failed'),
    failure_reason: Type.Union([Type.String(), Type.Null()], {
      description: 'why it failed; null unless failed',
      examples: [null],
    }),
    held_reason: Type.Union([Type.Literal('tax_form_required'), Type.Null()], {
      description:
        '`tax_form_required`: the affiliate needs a valid tax form on file (merchant setting tax_form_policy) before it can be sent; null when it may be sent',
      examples: [null],
    }),
    exported_at: NullableTimestamp(
      'when it was first in a CSV export; an exported payout is frozen: its amount and commissions no longer change',
    ),
    adjustments: Type.Array(
      Type.Object(
        {
          type: Type.Literal('clawback', { description: 'money taken back for a commission voided after it was paid' }),
          commission_id: Type.String({
            description: 'the voided commission',
            examples: ['com_01jd3t6m0s2e4w5x6y7z8a9b0c'],
          }),
          amount: Type.Number({ description: 'negative: what it deducts', examples: [-12.5] }),
        },
        { additionalProperties: false },
      ),
      {
        description: `what it deducts from its commissions, oldest first: at most the first ${PAYOUT_ADJUSTMENTS_MAX} (adjustment_count counts them all, adjustments_amount sums them all); amount is its commissions' sum plus adjustments_amount`,
        maxItems: PAYOUT_ADJUSTMENTS_MAX,
      },
    ),
    adjustment_count: Type.Integer({ minimum: 0, description: 'how many adjustments it has', examples: [1] }),
    adjustments_amount: Type.Number({
      maximum: 0,
      description: 'the sum of all its adjustments (zero or negative), listed or not',
      examples: [-12.5],
    }),
  },
  { additionalProperties: false, $id: 'Payout' },
);
export type Payout = Static<typeof Payout>;

export const PayoutList = ListOf(Payout, 'PayoutList');

/**
 * The most payouts one POST /api/v1/payouts answers with: a run over every affiliate of a large programme creates one
 * per affiliate and currency, and an answer is one NATS message.
 */
export const CREATED_PAYOUTS_MAX = 100;

export const CreatedPayouts = Type.Object(
  {
    data: Type.Array(Payout, {
      maxItems: CREATED_PAYOUTS_MAX,
      description: `the payouts created, one per affiliate and currency, by affiliate then currency: the first ${CREATED_PAYOUTS_MAX} when there are more (created_count says); empty when nothing reached min_payout`,
    }),
    created_count: Type.Integer({
      minimum: 0,
      description:
        'how many payouts the run created; all of them lead GET /api/v1/payouts?status=pending (newest first), with the same created_at',
      examples: [1],
    }),
  },
  { additionalProperties: false, $id: 'CreatedPayouts' },
);

export const CreatePayoutsBody = Type.Object(
  {
    affiliate_ids: Type.Optional(
      Type.Array(AffiliateId('an affiliate of this merchant'), {
        minItems: 1,
        maxItems: 100,
        uniqueItems: true,
        description: 'only these affiliates (default: every approved affiliate of the merchant)',
        examples: [['aff_01jd3t6m0s2e4w5x6y7z8a9b0c']],
      }),
    ),
  },
  { additionalProperties: false, $id: 'CreatePayouts' },
);
export type CreatePayoutsBody = Static<typeof CreatePayoutsBody>;

export const ListPayoutsQuery = Type.Object(
  {
    status: Type.Optional(PayoutStatusSchema),
    affiliate_id: Type.Optional(AffiliateId('only payouts of this affiliate')),
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);

export const PayoutIdParams = Type.Object(
  { payout_id: Type.String({ description: 'a payout id', examples: ['po_01jd3t6m0s2e4w5x6y7z8a9b0c'] }) },
  { additionalProperties: false },
);

export const ListPayoutCommissionsQuery = Type.Object(
  { cursor: Type.Optional(Cursor), limit: Type.Optional(Limit) },
  { additionalProperties: false },
);

export const UpdatePayoutBody = Type.Object(
  {
    status: Type.Union(
      PAYOUT_STATUSES.map((s) => Type.Literal(s)),
      {
        description:
          "the move: pending → sent or canceled, sent → paid or failed; any other move is 409 CONFLICT (sending is the platform's)",
        examples: ['sent'],
      },
    ),
    method: Type.Optional(Method),
    reference: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'your reference of the transfer (only with status sent)',
        examples: ['PAYPAL-BATCH-2026-11'],
      }),
    ),
    failure_reason: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'why it failed (required with status failed, accepted with no other)',
        examples: ['account_closed'],
      }),
    ),
  },
  { additionalProperties: false, $id: 'UpdatePayout' },
);
export type UpdatePayoutBody = Static<typeof UpdatePayoutBody>;

export const ExportPayoutsQuery = Type.Object(
  {
    status: Type.Optional(
      Type.Union(
        PAYOUT_STATUSES.map((s) => Type.Literal(s)),
        {
          description: 'payouts of this status (default pending; held payouts are never exported)',
          examples: ['pending'],
        },
      ),
    ),
    layout: Type.Optional(
      Type.Union([Type.Literal('paypal'), Type.Literal('bank')], {
        description:
          '`paypal` (default): the PayPal Payouts batch file, no header, for affiliates whose payout details are a PayPal e-mail; `bank`: one row per payout with a header, for affiliates whose payout details are a bank account',
        examples: ['paypal'],
      }),
    ),
    currency: Type.Optional(
      Type.String({
        pattern: '^[A-Z]{3}$',
        description: 'only payouts in this currency (a PayPal batch file holds one currency)',
        examples: ['USD'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type ExportPayoutsQuery = Static<typeof ExportPayoutsQuery>;

export const PayoutsCsv = Type.String({
  description:
    'CSV (RFC 4180, CRLF line ends). paypal: recipient e-mail, amount, currency, customer id (the payout id), note, wallet (PAYPAL). bank: a header row, then payout_id, affiliate_id, account_holder, iban, routing_number, account_number, amount, currency, reference',
  examples: [
    'jane@example.com,182.50,USD,po_01jd3t6m0s2e4w5x6y7z8a9b0c,Commissions 2026-11-01 to 2026-11-20,PAYPAL\r\n',
  ],
});
