import { Type } from '@sinclair/typebox';
import { PLANS } from '@platform/shared/plans';
import { NullableTimestamp, Timestamp } from '@platform/shared/schemas/common';

/** Payloads of Settings › Plan (routes-billing.ts, docs/BILLING.md). */

const PlanId = Type.Union(
  PLANS.map((p) => Type.Literal(p)),
  { description: 'a plan of the catalogue (shared/src/plans.ts)', examples: ['growth'] },
);

const Money = Type.Object(
  {
    amount: Type.String({ description: 'a decimal in the currency’s units', examples: ['99.00'] }),
    currency: Type.String({ description: 'ISO 4217, lower case', examples: ['usd'] }),
  },
  { additionalProperties: false },
);

const PlanView = Type.Object(
  {
    id: PlanId,
    name: Type.String(),
    price: Type.Union([Money, Type.Null()], {
      description: 'a month’s price; null: sold by contract (contact us), not upgraded to here',
    }),
    api_keys: Type.Boolean({ description: 'API keys (/api/v1) are allowed' }),
    custom_rate_limits: Type.Boolean({ description: 'a key may be given its own rate limit' }),
    rate_limit_per_min: Type.Union(
      [Type.Object({ default: Type.Integer(), max: Type.Integer() }, { additionalProperties: false }), Type.Null()],
      { description: 'requests per minute per key: the default and the most; null without API access' },
    ),
  },
  { additionalProperties: false },
);

const Receipt = Type.Object(
  {
    id: Type.String(),
    kind: Type.Union([Type.Literal('upgrade'), Type.Literal('renewal')], {
      description: 'an upgrade’s prorated difference, or a month renewed',
    }),
    from_plan: PlanId,
    to_plan: PlanId,
    amount: Money,
    card: Type.Union([Type.String({ examples: ['visa •••• 4242'] }), Type.Null()]),
    payment_intent: Type.Union([Type.String(), Type.Null()], { description: 'the charge on the platform’s account' }),
    created_at: Timestamp('when it was paid'),
  },
  { additionalProperties: false, $id: 'DashboardReceipt' },
);

export const BillingView = Type.Object(
  {
    plan: PlanId,
    plans: Type.Array(PlanView, { description: 'every plan, cheapest first' }),
    payments: Type.Union([Type.Literal('sandbox'), Type.Literal('approval')], {
      description:
        'sandbox: upgrades are paid with the payment service’s test cards; approval: live payments have no processor, so an upgrade is a request the operator approves',
    }),
    period_end: NullableTimestamp('when the paid month ends (null: nothing paid for)'),
    card: Type.Union(
      [Type.Object({ brand: Type.String(), last4: Type.String() }, { additionalProperties: false }), Type.Null()],
      { description: 'the saved card' },
    ),
    requested: Type.Union(
      [
        Type.Object({ plan: PlanId, requested_at: Timestamp('when it was asked') }, { additionalProperties: false }),
        Type.Null(),
      ],
      { description: 'an upgrade waiting for the operator’s approval' },
    ),
    receipts: Type.Array(Receipt, { description: 'the charges paid, newest first (the last 50)' }),
    status: Type.Union([Type.Literal('active'), Type.Literal('past_due')], {
      description: 'past_due: the last renewal was declined; the plan is kept for 7 days while it is tried again',
    }),
    past_due_since: NullableTimestamp('when the renewal was first declined'),
    downgrade_to: Type.Union([PlanId, Type.Null()], { description: 'the plan that applies when the paid month ends' }),
  },
  { additionalProperties: false, $id: 'DashboardBilling' },
);

/** A card as the form takes it: the number is never stored, only its last four digits. */
const CardFields = Type.Object(
  {
    number: Type.String({ pattern: '^[0-9 ]{12,23}$', description: 'never stored: only its last four digits' }),
    expiry: Type.String({ pattern: '^(0[1-9]|1[0-2])/[0-9]{2}$', examples: ['12/34'], description: 'MM/YY' }),
    cvc: Type.String({ pattern: '^[0-9]{3,4}$' }),
  },
  { additionalProperties: false },
);

export const UpgradeBody = Type.Object(
  {
    plan: PlanId,
    attempt: Type.String({
      minLength: 8,
      maxLength: 64,
      pattern: '^[A-Za-z0-9_-]+$',
      description:
        'the key of this upgrade attempt, made by the client once per attempt: the same attempt sent again answers its first outcome and never charges twice',
    }),
    card: Type.Optional({ ...CardFields, description: 'a new card to pay with and save; the saved one when left out' }),
  },
  { additionalProperties: false, $id: 'DashboardUpgrade' },
);

export const CardBody = Type.Object(
  { card: { ...CardFields, description: 'the card renewals are charged to from now on' } },
  { additionalProperties: false, $id: 'DashboardBillingCard' },
);

export const CardResult = Type.Object(
  {
    card: Type.Object({ brand: Type.String(), last4: Type.String() }, { additionalProperties: false }),
    status: Type.Union([Type.Literal('active'), Type.Literal('past_due')], {
      description: 'past_due still when the month left unpaid was tried on the new card and declined',
    }),
  },
  { additionalProperties: false, $id: 'DashboardBillingCardResult' },
);

export const UpgradeResult = Type.Object(
  {
    status: Type.Union([Type.Literal('succeeded'), Type.Literal('requested')], {
      description: 'succeeded: paid, the plan applies now; requested: waiting for the operator',
    }),
    plan: PlanId,
    receipt: Type.Union([Receipt, Type.Null()]),
  },
  { additionalProperties: false, $id: 'DashboardUpgradeResult' },
);

export const DowngradeBody = Type.Object({ plan: PlanId }, { additionalProperties: false, $id: 'DashboardDowngrade' });

export const DowngradeResult = Type.Object(
  {
    plan: PlanId,
    downgrade_to: Type.Union([PlanId, Type.Null()], { description: 'the plan that applies when the paid month ends' }),
    applies_at: NullableTimestamp('when it applies (null: applied now, or nothing scheduled)'),
  },
  { additionalProperties: false, $id: 'DashboardDowngradeResult' },
);
