import { Type } from '@sinclair/typebox';
import { Timestamp } from '@platform/shared/schemas/common';

/** Payloads of the Balance page's routes (routes-balance.ts): the merchant's connected account on the payment API. */

const Money = Type.Object(
  {
    amount: Type.String({ description: 'decimal, in the currency’s units', examples: ['242.45'] }),
    currency: Type.String({ description: 'lower case, as the payment API writes it', examples: ['usd'] }),
  },
  { additionalProperties: false },
);

export const BalanceOverview = Type.Object(
  {
    account: Type.Union(
      [
        Type.Object(
          {
            id: Type.String({ examples: ['acct_01m8b0j2n8p5y1x7c9v3k4q6rw'] }),
            livemode: Type.Boolean(),
            email: Type.Union([Type.String(), Type.Null()]),
            details_submitted: Type.Boolean(),
            charges_enabled: Type.Boolean(),
            payouts_enabled: Type.Boolean(),
            currently_due: Type.Array(Type.String(), {
              description: 'what onboarding still has to collect',
              examples: [['external_account']],
            }),
            disabled_reason: Type.Union([Type.String(), Type.Null()]),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'null until the platform creates a connected account with metadata[merchant_id]' },
    ),
    available: Type.Array(Money, { description: 'per currency' }),
    pending: Type.Array(Money, { description: 'per currency: payments not yet available' }),
  },
  { additionalProperties: false, $id: 'BalanceOverview' },
);

export const BalanceAccountLink = Type.Object(
  {
    url: Type.String({ description: 'the hosted onboarding page; single use', format: 'uri' }),
    expires_at: Timestamp('when the link stops working (five minutes)'),
  },
  { additionalProperties: false, $id: 'BalanceAccountLink' },
);

/** The sandbox processor's test payment methods a merchant may fund with. */
export const FUNDING_METHODS = ['pm_card_visa', 'pm_card_bypassPending', 'pm_card_chargeDeclined'] as const;

export const BalanceFunding = Type.Object(
  {
    amount: Type.String({
      pattern: '^(0|[1-9][0-9]{0,11})(\\.[0-9]{1,3})?$',
      description: 'decimal, at most the currency’s minor unit',
      examples: ['250.00'],
    }),
    currency: Type.String({ pattern: '^[a-z]{3}$', examples: ['usd'] }),
    payment_method: Type.Union(
      FUNDING_METHODS.map((m) => Type.Literal(m)),
      { description: 'a test card of the sandbox processor' },
    ),
  },
  { additionalProperties: false, $id: 'BalanceFunding' },
);

export const BalanceFundingResult = Type.Object(
  {
    id: Type.String({ examples: ['pi_01m8b0j2n8p5y1x7c9v3k4q6rw'] }),
    status: Type.String({ examples: ['succeeded'] }),
    amount: Money,
  },
  { additionalProperties: false, $id: 'BalanceFundingResult' },
);

export const BalanceTransactionsQuery = Type.Object(
  {
    starting_after: Type.Optional(
      Type.String({ pattern: '^txn_[0-9a-z]{1,64}$', description: 'the last transaction of the page before' }),
    ),
  },
  { additionalProperties: false },
);

export const BalanceTransactionPage = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          type: Type.String({ examples: ['charge'] }),
          status: Type.String({ examples: ['pending'] }),
          amount: Type.String({ description: 'decimal; negative when money leaves the balance' }),
          fee: Type.String(),
          net: Type.String(),
          currency: Type.String(),
          description: Type.Union([Type.String(), Type.Null()]),
          source: Type.String({ examples: ['pi_01m8b0j2n8p5y1x7c9v3k4q6rw'] }),
          created: Timestamp('when it was recorded'),
          available_on: Timestamp('when a pending amount becomes available'),
        },
        { additionalProperties: false },
      ),
    ),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'starting_after for the next page; null on the last',
    }),
  },
  { additionalProperties: false, $id: 'BalanceTransactionPage' },
);

export const OpenAccountBody = Type.Object(
  {
    country: Type.Optional(
      Type.String({
        pattern: '^[A-Z]{2}$',
        description: 'the country of the business, ISO 3166-1 alpha-2; US when left out',
        examples: ['US'],
      }),
    ),
  },
  { additionalProperties: false, $id: 'BalanceOpenAccount' },
);
export const OpenedAccount = Type.Object(
  { id: Type.String(), livemode: Type.Boolean() },
  { additionalProperties: false, $id: 'BalanceOpenedAccount' },
);
