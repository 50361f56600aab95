import { Type, type TSchema } from '@sinclair/typebox';

/**
 * The objects and parameters of the platform payment API (/v1), in Stripe's wire conventions: `object` names the
 * kind, ids are prefixed, amounts are integers in the currency's minor unit, currencies lower case, times Unix seconds.
 * Request parameters arrive form-encoded (everything is text), so the payments service validates them with type
 * coercion: "2000" is the integer 2000, "true" the boolean true.
 */

const Id = (prefix: string, description: string) =>
  Type.String({ pattern: `^${prefix}_[0-9a-z]{1,64}$`, maxLength: 80, description, examples: [`${prefix}_1Nv0FG`] });
const Created = Type.Integer({ description: 'Unix seconds', examples: [1764063181] });
const Livemode = Type.Boolean({ description: 'true for live data (sk_live_ keys), false for test data' });
export const Currency = Type.String({
  pattern: '^[a-z]{3}$',
  description: 'ISO 4217 code, lower case',
  examples: ['usd'],
});
export const Amount = Type.Integer({
  minimum: 1,
  maximum: 99_999_999,
  description: "in the currency's minor unit (cents for usd)",
  examples: [2000],
});
export const Metadata = Type.Record(Type.String({ maxLength: 40 }), Type.String({ maxLength: 500 }), {
  maxProperties: 50,
  description:
    'your own key-value pairs (at most 50, keys up to 40 characters, values up to 500); an empty value removes the key',
  examples: [{ order_id: '6735' }],
});
const Description = Type.String({ maxLength: 1000, description: 'shown to you, not to the customer' });
const Url = (description: string) =>
  Type.String({
    format: 'uri',
    pattern: '^https?://',
    maxLength: 2048,
    description,
    examples: ['https://example.com/done'],
  });
const Expand = Type.Array(Type.String({ maxLength: 200 }), {
  maxItems: 20,
  description: 'accepted; ids are not expanded',
});

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const ListParams = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10, description: '1 to 100, default 10' })),
  starting_after: Type.Optional(Type.String({ maxLength: 80, description: 'an object id: the page after it' })),
  ending_before: Type.Optional(Type.String({ maxLength: 80, description: 'an object id: the page before it' })),
  expand: Type.Optional(Expand),
};

export const ListEnvelope = (item: TSchema, id: string) =>
  Type.Object(
    {
      object: Type.Literal('list'),
      data: Type.Array(item, { description: 'newest first' }),
      has_more: Type.Boolean({ description: 'whether another page follows in the direction asked' }),
      url: Type.String({ examples: ['/v1/payouts'] }),
    },
    { $id: id },
  );

// ---- accounts -------------------------------------------------------------------------------------------------

const Requirements = Type.Object({
  currently_due: Type.Array(Type.String(), { examples: [['business_profile.name', 'external_account']] }),
  eventually_due: Type.Array(Type.String()),
  past_due: Type.Array(Type.String()),
  disabled_reason: nullable(Type.String({ examples: ['requirements.past_due'] })),
  current_deadline: Type.Null(),
  errors: Type.Array(Type.Unknown()),
});

export const BankAccountSchema = Type.Object({
  id: Type.String({ examples: ['ba_acct_1Nv0FG'] }),
  object: Type.Literal('bank_account'),
  account: Type.String(),
  account_holder_name: nullable(Type.String()),
  bank_name: nullable(Type.String()),
  country: Type.String(),
  currency: Currency,
  last4: Type.String({ examples: ['6789'] }),
  routing_number: Type.String({ examples: ['110000000'] }),
  status: Type.Literal('new'),
});

export const AccountSchema = Type.Object(
  {
    id: Id('acct', 'acct_…'),
    object: Type.Literal('account'),
    type: Type.Union([Type.Literal('express'), Type.Literal('custom'), Type.Literal('standard')]),
    country: Type.String({ examples: ['US'] }),
    email: nullable(Type.String()),
    business_type: nullable(Type.String()),
    business_profile: Type.Object({
      name: nullable(Type.String()),
      url: nullable(Type.String()),
      product_description: nullable(Type.String()),
    }),
    default_currency: Currency,
    charges_enabled: Type.Boolean({ description: 'business details were submitted' }),
    payouts_enabled: Type.Boolean({ description: 'onboarding is complete, with a bank account to pay out to' }),
    details_submitted: Type.Boolean(),
    requirements: Requirements,
    external_accounts: Type.Object({
      object: Type.Literal('list'),
      data: Type.Array(BankAccountSchema),
      has_more: Type.Boolean(),
      url: Type.String(),
    }),
    metadata: Metadata,
    created: Created,
    livemode: Livemode,
  },
  { $id: 'Account' },
);

export const CreateAccountParams = Type.Object(
  {
    type: Type.Optional(Type.Union([Type.Literal('express'), Type.Literal('custom'), Type.Literal('standard')])),
    country: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2, default US' })),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 320 })),
    business_type: Type.Optional(
      Type.Union([
        Type.Literal('individual'),
        Type.Literal('company'),
        Type.Literal('non_profit'),
        Type.Literal('government_entity'),
      ]),
    ),
    default_currency: Type.Optional(Currency),
    metadata: Type.Optional(Metadata),
    expand: Type.Optional(Expand),
  },
  {
    additionalProperties: false,
    description: 'metadata[merchant_id] links the account to a merchant of the platform (mer_…)',
  },
);

// ---- account links --------------------------------------------------------------------------------------------

export const AccountLinkSchema = Type.Object(
  {
    object: Type.Literal('account_link'),
    created: Created,
    expires_at: Type.Integer({ description: 'Unix seconds; five minutes after created' }),
    url: Type.String({
      description: 'single use: the hosted onboarding page',
      examples: ['https://pay.example.com/connect/onboarding/…'],
    }),
  },
  { $id: 'AccountLink' },
);

export const CreateAccountLinkParams = Type.Object(
  {
    account: Type.String({ maxLength: 80, description: 'acct_…' }),
    type: Type.Literal('account_onboarding'),
    refresh_url: Url('where an expired or already used link sends the browser'),
    return_url: Url('where the browser goes once onboarding is submitted'),
    collect: Type.Optional(Type.Union([Type.Literal('currently_due'), Type.Literal('eventually_due')])),
    expand: Type.Optional(Expand),
  },
  { additionalProperties: false },
);

// ---- payment intents ------------------------------------------------------------------------------------------

export const PAYMENT_INTENT_STATUSES = [
  'requires_payment_method',
  'requires_confirmation',
  'requires_action',
  'processing',
  'requires_capture',
  'canceled',
  'succeeded',
] as const;
const CaptureMethod = Type.Union([Type.Literal('automatic'), Type.Literal('automatic_async'), Type.Literal('manual')]);

export const PaymentIntentSchema = Type.Object(
  {
    id: Id('pi', 'pi_…'),
    object: Type.Literal('payment_intent'),
    amount: Amount,
    amount_capturable: Type.Integer(),
    amount_received: Type.Integer(),
    currency: Currency,
    status: Type.Union(PAYMENT_INTENT_STATUSES.map((s) => Type.Literal(s))),
    capture_method: CaptureMethod,
    confirmation_method: Type.Literal('automatic'),
    payment_method: nullable(Type.String({ examples: ['pm_card_visa'] })),
    payment_method_types: Type.Array(Type.String(), { examples: [['card']] }),
    client_secret: Type.String(),
    description: nullable(Type.String()),
    metadata: Metadata,
    transfer_data: nullable(Type.Object({ destination: Type.String({ description: 'acct_…' }) })),
    on_behalf_of: Type.Null(),
    last_payment_error: nullable(
      Type.Object({
        type: Type.String(),
        code: Type.String(),
        decline_code: Type.Optional(Type.String()),
        message: Type.String(),
        payment_method: Type.Object({ id: Type.String(), object: Type.Literal('payment_method') }),
      }),
    ),
    next_action: nullable(Type.Object({ type: Type.String(), use_stripe_sdk: Type.Optional(Type.Unknown()) })),
    latest_charge: Type.Null(),
    cancellation_reason: nullable(Type.String()),
    canceled_at: nullable(Created),
    created: Created,
    livemode: Livemode,
  },
  { $id: 'PaymentIntent' },
);

export const CreatePaymentIntentParams = Type.Object(
  {
    amount: Amount,
    currency: Currency,
    payment_method: Type.Optional(
      Type.String({ maxLength: 200, description: 'a sandbox test method, e.g. pm_card_visa' }),
    ),
    payment_method_types: Type.Optional(Type.Array(Type.Literal('card'), { maxItems: 1 })),
    confirm: Type.Optional(Type.Boolean({ description: 'confirm at once (needs payment_method)' })),
    capture_method: Type.Optional(CaptureMethod),
    transfer_data: Type.Optional(
      Type.Object(
        { destination: Type.String({ maxLength: 80, description: 'the connected account funded by this payment' }) },
        { additionalProperties: false },
      ),
    ),
    metadata: Type.Optional(Metadata),
    description: Type.Optional(Description),
    expand: Type.Optional(Expand),
  },
  { additionalProperties: false },
);

export const ConfirmPaymentIntentParams = Type.Object(
  {
    payment_method: Type.Optional(Type.String({ maxLength: 200 })),
    return_url: Type.Optional(Url('accepted for Stripe compatibility')),
    expand: Type.Optional(Expand),
  },
  { additionalProperties: false },
);

export const CapturePaymentIntentParams = Type.Object(
  {
    amount_to_capture: Type.Optional(Amount),
    metadata: Type.Optional(Metadata),
    expand: Type.Optional(Expand),
  },
  { additionalProperties: false },
);

export const CancelPaymentIntentParams = Type.Object(
  {
    cancellation_reason: Type.Optional(
      Type.Union([
        Type.Literal('duplicate'),
        Type.Literal('fraudulent'),
        Type.Literal('requested_by_customer'),
        Type.Literal('abandoned'),
      ]),
    ),
    expand: Type.Optional(Expand),
  },
  { additionalProperties: false },
);

// ---- balance transactions -------------------------------------------------------------------------------------

export const BALANCE_TRANSACTION_TYPES = ['charge', 'payment', 'payout', 'payout_failure', 'transfer'] as const;

export const BalanceTransactionSchema = Type.Object(
  {
    id: Id('txn', 'txn_…'),
    object: Type.Literal('balance_transaction'),
    amount: Type.Integer({ description: 'gross, negative when money leaves the balance' }),
    fee: Type.Integer(),
    net: Type.Integer({ description: 'amount minus fee' }),
    currency: Currency,
    type: Type.Union(BALANCE_TRANSACTION_TYPES.map((t) => Type.Literal(t))),
    status: Type.Union([Type.Literal('pending'), Type.Literal('available')]),
    available_on: Type.Integer({ description: 'Unix seconds: when a pending amount becomes available' }),
    source: Type.String({ description: 'what moved the money: pi_… or po_…' }),
    description: nullable(Type.String()),
    reporting_category: Type.String(),
    created: Created,
  },
  { $id: 'BalanceTransaction' },
);

const Range = Type.Union([
  Type.Integer({ minimum: 0 }),
  Type.Object(
    {
      gt: Type.Optional(Type.Integer({ minimum: 0 })),
      gte: Type.Optional(Type.Integer({ minimum: 0 })),
      lt: Type.Optional(Type.Integer({ minimum: 0 })),
      lte: Type.Optional(Type.Integer({ minimum: 0 })),
    },
    { additionalProperties: false },
  ),
]);

export const ListTransactionsParams = Type.Object(
  {
    ...ListParams,
    type: Type.Optional(Type.Union(BALANCE_TRANSACTION_TYPES.map((t) => Type.Literal(t)))),
    created: Type.Optional(Range),
    currency: Type.Optional(Currency),
    source: Type.Optional(Type.String({ maxLength: 80 })),
  },
  { additionalProperties: false },
);

export const BalanceSchema = Type.Object(
  {
    object: Type.Literal('balance'),
    available: Type.Array(Type.Object({ amount: Type.Integer(), currency: Currency })),
    pending: Type.Array(Type.Object({ amount: Type.Integer(), currency: Currency })),
    livemode: Livemode,
  },
  { $id: 'Balance' },
);

// ---- payouts --------------------------------------------------------------------------------------------------

export const PAYOUT_STATUSES = ['pending', 'in_transit', 'paid', 'failed', 'canceled'] as const;

export const PayoutSchema = Type.Object(
  {
    id: Id('po', 'po_…'),
    object: Type.Literal('payout'),
    amount: Amount,
    currency: Currency,
    status: Type.Union(PAYOUT_STATUSES.map((s) => Type.Literal(s))),
    arrival_date: Type.Integer({ description: 'Unix seconds: when the payout is expected to arrive' }),
    balance_transaction: Type.String({ description: 'txn_…' }),
    failure_balance_transaction: nullable(Type.String()),
    failure_code: nullable(Type.String({ examples: ['account_closed'] })),
    failure_message: nullable(Type.String()),
    destination: nullable(Type.String({ description: 'the bank account (ba_…), null for the platform' })),
    method: Type.Literal('standard'),
    type: Type.Literal('bank_account'),
    automatic: Type.Literal(false),
    description: nullable(Type.String()),
    metadata: Metadata,
    created: Created,
    livemode: Livemode,
  },
  { $id: 'Payout' },
);

export const CreatePayoutParams = Type.Object(
  {
    amount: Amount,
    currency: Currency,
    description: Type.Optional(Description),
    metadata: Type.Optional(Metadata),
    method: Type.Optional(Type.Literal('standard')),
    expand: Type.Optional(Expand),
  },
  { additionalProperties: false },
);

export const ListPayoutsParams = Type.Object(
  {
    ...ListParams,
    status: Type.Optional(Type.Union(PAYOUT_STATUSES.map((s) => Type.Literal(s)))),
    created: Type.Optional(Range),
  },
  { additionalProperties: false },
);

export const RetrieveParams = Type.Object({ expand: Type.Optional(Expand) }, { additionalProperties: false });
export const ListAccountsParams = Type.Object(
  { ...ListParams, created: Type.Optional(Range) },
  { additionalProperties: false },
);
