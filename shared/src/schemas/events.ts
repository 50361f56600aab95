import { Type, type TSchema } from '@sinclair/typebox';
import type { DomainEventType } from '../catalogue.ts';
import { Affiliate } from './affiliates.ts';
import { Timestamp } from './common.ts';
import { PAYOUT_COMMISSION_IDS_MAX } from './payouts.ts';

/** The `data` of each of the twelve domain events, which is also the `data` of the webhook envelope. */

const Money = (description: string) => Type.Number({ description, examples: [12.5] });
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code', examples: ['USD'] });
const Id = (description: string, example: string) => Type.String({ description, examples: [example] });

const CommissionEventData = Type.Object(
  {
    commission_id: Id('the commission', 'com_01jd3t6m0s2e4w5x6y7z8a9b0c'),
    affiliate_id: Id('the affiliate who earns it', 'aff_01jd3t6m0s2e4w5x6y7z8a9b0c'),
    amount: Money('commission amount'),
    currency: Currency,
    status: Type.Union(
      [Type.Literal('pending'), Type.Literal('approved'), Type.Literal('paid'), Type.Literal('voided')],
      {
        description: 'the commission status after the change',
      },
    ),
    order_id: Id("the event's external_id", 'order_1042'),
    event_id: Id('the conversion event', 'evt_01jd3t6m0s2e4w5x6y7z8a9b0c'),
    level: Type.Integer({ minimum: 0, maximum: 5, description: '0 for the direct affiliate, 1.. for ancestors' }),
    clawback: Type.Optional(
      Type.Object(
        {
          payout_id: Id('the paid payout that carried it', 'po_01jd3t6m0s2e4w5x6y7z8a9b0c'),
          amount: Money("the amount taken back from the affiliate's next payouts"),
          currency: Currency,
        },
        {
          additionalProperties: false,
          description:
            'commission.voided only, when the commission had been paid: the money to take back from later payouts',
        },
      ),
    ),
  },
  { additionalProperties: false, $id: 'CommissionEventData' },
);

const PayoutEventData = (failed: boolean) =>
  Type.Object(
    {
      payout_id: Id('the payout', 'po_01jd3t6m0s2e4w5x6y7z8a9b0c'),
      affiliate_id: Id('the affiliate paid', 'aff_01jd3t6m0s2e4w5x6y7z8a9b0c'),
      amount: Money('amount paid out'),
      currency: Currency,
      status: Type.Union([Type.Literal('sent'), Type.Literal('paid'), Type.Literal('failed')]),
      commission_ids: Type.Array(Type.String(), {
        maxItems: PAYOUT_COMMISSION_IDS_MAX,
        description: `the commissions this payout settles: the first ${PAYOUT_COMMISSION_IDS_MAX}, by id (GET /api/v1/payouts/{payout_id}/commissions pages through every one)`,
      }),
      commission_count: Type.Integer({ minimum: 0, description: 'how many commissions this payout settles' }),
      ...(failed
        ? { failure_reason: Type.String({ description: 'why the payout failed', examples: ['account_closed'] }) }
        : {}),
    },
    { additionalProperties: false },
  );

const EVENT_DATA_SCHEMAS: Record<DomainEventType, TSchema> = {
  'affiliate.created': Affiliate,
  'affiliate.approved': Affiliate,
  'affiliate.suspended': Affiliate,
  'affiliate.tier_promoted': Type.Object(
    {
      ...Affiliate.properties,
      previous_tier_id: Type.Union([Type.String(), Type.Null()], { description: 'the tier before the promotion' }),
    },
    { additionalProperties: false },
  ),
  'commission.created': CommissionEventData,
  'commission.approved': CommissionEventData,
  'commission.voided': CommissionEventData,
  'payout.sent': PayoutEventData(false),
  'payout.paid': PayoutEventData(false),
  'payout.failed': PayoutEventData(true),
  'fraud.flagged': Type.Object(
    {
      affiliate_id: Id('the affiliate suspected', 'aff_01jd3t6m0s2e4w5x6y7z8a9b0c'),
      event_id: Type.Optional(Id('the conversion event that triggered the rule', 'evt_01jd3t6m0s2e4w5x6y7z8a9b0c')),
      rule: Type.Union(
        [Type.Literal('self_referral'), Type.Literal('own_fingerprint'), Type.Literal('conversion_velocity')],
        {
          description: 'which rule fired',
        },
      ),
      details: Type.Record(Type.String(), Type.Unknown(), { description: 'what the rule saw' }),
    },
    { additionalProperties: false },
  ),
  'tax_form.submitted': Type.Object(
    {
      affiliate_id: Id('the affiliate', 'aff_01jd3t6m0s2e4w5x6y7z8a9b0c'),
      form_type: Type.Union([Type.Literal('W-9'), Type.Literal('W-8BEN'), Type.Literal('W-8BEN-E')]),
      submitted_at: Timestamp('when the form was submitted'),
    },
    { additionalProperties: false },
  ),
};

/** The body of every webhook: the domain event's envelope. */
export const webhookEnvelope = (type: DomainEventType) =>
  Type.Object(
    {
      id: Id('unique event id; equals the webhook-id header', 'msg_01jd3t6m0s2e4w5x6y7z8a9b0c'),
      type: Type.Literal(type),
      created_at: Timestamp('when the event happened'),
      merchant_id: Id('the merchant', 'mer_01jd3t6m0s2e4w5x6y7z8a9b0c'),
      data: EVENT_DATA_SCHEMAS[type],
    },
    { additionalProperties: false },
  );
