import t from 'tap';
import {
  availabilityMovement,
  chargeMovement,
  checked,
  EXTERNAL,
  payoutFailureMovement,
  payoutMovement,
  processingFee,
  transferMovement,
} from '@platform/payments/domain/ledger-rules';
import { accountStanding } from '@platform/payments/domain/requirements';
import { railOutcome } from '@platform/payments/clock';

const sum = (m: { postings: { amount: number }[] }) => m.postings.reduce((a, p) => a + p.amount, 0);

t.test('the processing fee: 2.9 % plus 30 cents, half-even, in the minor unit of the currency', async (t) => {
  t.equal(processingFee(2000, 'usd'), 88); // 58 + 30
  t.equal(processingFee(2500, 'eur'), 102); // 72.5 → 72 (even) + 30
  t.equal(processingFee(1500, 'usd'), 74); // 43.5 → 44 (even) + 30
  t.equal(processingFee(10, 'usd'), 10, 'never more than the amount');
  t.equal(processingFee(1000, 'jpy'), 29, 'no fixed part in yen: 0.3 rounds to 0');
  t.equal(processingFee(1000, 'kwd'), 329, 'the fixed part in fils');
});

t.test('every movement balances, and only outside parties are debited below zero', async (t) => {
  const charge = chargeMovement({ holder: 'acct_1', amount: 2000, fee: 88, currency: 'usd', availableAtOnce: false });
  t.equal(sum(charge), 0);
  t.same(charge.postings, [
    { holder: EXTERNAL.cardPayments, bucket: 'available', amount: -2000 },
    { holder: 'acct_1', bucket: 'pending', amount: 1912 },
    { holder: EXTERNAL.processorFees, bucket: 'available', amount: 88 },
  ]);
  const atOnce = chargeMovement({ holder: 'platform', amount: 10, fee: 10, currency: 'usd', availableAtOnce: true });
  t.same(
    atOnce.postings.map((p) => p.holder),
    [EXTERNAL.cardPayments, EXTERNAL.processorFees],
    'a fee that takes it all leaves no posting of zero',
  );
  for (const m of [
    availabilityMovement('acct_1', 1912, 'usd'),
    payoutMovement('acct_1', 500, 'usd'),
    payoutFailureMovement('acct_1', 500, 'usd'),
  ])
    t.equal(sum(m), 0, m.kind);
  t.same(payoutMovement('acct_1', 500, 'usd').postings[0], { holder: 'acct_1', bucket: 'available', amount: -500 });
  t.throws(
    () => checked({ kind: 'payout', currency: 'usd', postings: [{ holder: 'a', bucket: 'available', amount: 1 }] }),
    {
      message: 'movement payout does not balance: 1',
    },
  );
  t.throws(() =>
    checked({
      kind: 'payout',
      currency: 'usd',
      postings: [
        { holder: 'a', bucket: 'available', amount: 0.5 },
        { holder: 'b', bucket: 'available', amount: -0.5 },
      ],
    }),
  );
});

t.test("an account's standing follows what onboarding collected", async (t) => {
  const empty = {
    business_name: null,
    product_description: null,
    business_url: null,
    bank_last4: null,
    tos_accepted_at: null,
  };
  t.same(accountStanding(empty), {
    currently_due: [
      'business_profile.name',
      'business_profile.product_description',
      'external_account',
      'tos_acceptance.date',
    ],
    charges_enabled: false,
    payouts_enabled: false,
    details_submitted: false,
    disabled_reason: 'requirements.past_due',
  });
  const business = {
    ...empty,
    business_name: 'Acme',
    business_url: 'https://acme.example',
    tos_accepted_at: new Date(),
  };
  t.match(accountStanding(business), {
    charges_enabled: true,
    payouts_enabled: false,
    currently_due: ['external_account'],
  });
  t.match(accountStanding({ ...business, bank_last4: '6789' }), {
    charges_enabled: true,
    payouts_enabled: true,
    details_submitted: true,
    disabled_reason: null,
    currently_due: [],
  });
});

t.test("the sandbox rail pays every bank account but Stripe's failing test numbers", async (t) => {
  t.equal(railOutcome('6789'), null);
  t.match(railOutcome('1116'), { code: 'no_account' });
  t.match(railOutcome('1113'), { code: 'account_closed' });
});

t.test('affiliate payouts: a transfer between two balances', async (t) => {
  t.same(transferMovement('acct_1', 'aff_1', 18250, 'usd').postings, [
    { holder: 'acct_1', bucket: 'available', amount: -18250 },
    { holder: 'aff_1', bucket: 'available', amount: 18250 },
  ]);
  // Decimal amounts in minor units: shared/src/money.ts (test/shared/money.happy.test.ts).
});
