import t from 'tap';
import { eventually } from '../helpers/platform.ts';
import { fundedAccount, onboard, startPayments } from './setup.ts';

t.test(
  'payouts through the Stripe SDK: the rail moves them on its clock, with and without Stripe-Account',
  async (t) => {
    const stack = await startPayments(t, {
      paymentsEnv: { PAYOUT_RAIL_STEP_MS: '150', PAYMENTS_CLOCK_INTERVAL_MS: '50', PAYMENTS_AVAILABILITY_DELAY_S: '0' },
    });
    const { test } = stack;

    // Onboarding enabled payouts; a payment with pm_card_visa becomes available on the clock (delay 0 here).
    const account = await test.accounts.create({ type: 'express', email: 'seller@example.com' });
    t.equal(account.payouts_enabled, false);
    await onboard(stack, account.id);
    const onboarded = await test.accounts.retrieve(account.id);
    t.match(onboarded, {
      payouts_enabled: true,
      charges_enabled: true,
      details_submitted: true,
      requirements: { currently_due: [], disabled_reason: null },
      business_profile: { name: 'Acme Supplies' },
    });
    t.match(onboarded.external_accounts?.data[0], {
      object: 'bank_account',
      last4: '6789',
      routing_number: '110000000',
    });
    t.notMatch(JSON.stringify(onboarded), '000123456789', 'the account number never leaves the service');

    await test.paymentIntents.create({
      amount: 10_000,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
      transfer_data: { destination: account.id },
    });
    const asAccount = { stripeAccount: account.id };
    await eventually(
      async () => {
        const balance = await test.balance.retrieve({}, asAccount);
        return balance.available[0]?.amount === 9680 ? true : undefined;
      },
      10_000,
      'the payment to become available',
    );

    const payout = await test.payouts.create({ amount: 5000, currency: 'usd', metadata: { batch: '7' } }, asAccount);
    t.match(payout, { object: 'payout', amount: 5000, currency: 'usd', status: 'pending', metadata: { batch: '7' } });
    t.match(payout.id, /^po_/);
    t.match(payout.balance_transaction, /^txn_/);
    const paid = await eventually(
      async () => {
        const p = await test.payouts.retrieve(payout.id, {}, asAccount);
        return p.status === 'paid' ? p : undefined;
      },
      10_000,
      'the payout to be paid',
    );
    t.equal(paid.failure_code, null);
    t.same((await test.balance.retrieve({}, asAccount)).available, [{ amount: 4680, currency: 'usd' }]);

    // Without Stripe-Account: the platform's own payouts (none yet), not the account's.
    t.same((await test.payouts.list()).data, []);
    await t.rejects(test.payouts.retrieve(payout.id), { code: 'resource_missing', statusCode: 404 });
    await test.paymentIntents.create({
      amount: 2000,
      currency: 'usd',
      payment_method: 'pm_card_bypassPending',
      confirm: true,
    });
    const platformPayout = await test.payouts.create({ amount: 1000, currency: 'usd' });
    t.same(
      (await test.payouts.list()).data.map((p) => p.id),
      [platformPayout.id],
    );
    t.same(
      (await test.payouts.list({}, asAccount)).data.map((p) => p.id),
      [payout.id],
    );
    const txns = await test.balanceTransactions.list({}, asAccount);
    t.same(
      txns.data.map((x) => [x.type, x.amount, x.net, x.status]),
      [
        ['payout', -5000, -5000, 'available'],
        ['payment', 10_000, 9680, 'available'],
      ],
    );
  },
);

t.test('a payout to a bank account that does not exist fails, and its amount comes back', async (t) => {
  const stack = await startPayments(t, {
    paymentsEnv: { PAYOUT_RAIL_STEP_MS: '100', PAYMENTS_CLOCK_INTERVAL_MS: '50' },
  });
  const account = await fundedAccount(stack, 3000, { account_number: '000111111116' });
  const asAccount = { stripeAccount: account.id };
  const payout = await stack.test.payouts.create({ amount: 3000, currency: 'usd' }, asAccount);
  t.same((await stack.test.balance.retrieve({}, asAccount)).available, [{ amount: 0, currency: 'usd' }]);
  const failed = await eventually(
    async () => {
      const p = await stack.test.payouts.retrieve(payout.id, {}, asAccount);
      return p.status === 'failed' ? p : undefined;
    },
    10_000,
    'the payout to fail',
  );
  t.equal(failed.failure_code, 'no_account');
  t.match(failed.failure_balance_transaction, /^txn_/);
  t.same((await stack.test.balance.retrieve({}, asAccount)).available, [{ amount: 3000, currency: 'usd' }]);
  const txns = await stack.test.balanceTransactions.list({ type: 'payout_failure' }, asAccount);
  t.same(
    txns.data.map((x) => [x.amount, x.source]),
    [[3000, payout.id]],
  );
});

t.test('for await pages through 250 payouts, newest first, each once', async (t) => {
  const stack = await startPayments(t, { paymentsEnv: { PAYOUT_RAIL_STEP_MS: '3600000' } });
  const account = await fundedAccount(stack, 250);
  const asAccount = { stripeAccount: account.id };
  const created: string[] = [];
  for (let i = 0; i < 250; i++)
    created.push((await stack.test.payouts.create({ amount: 1, currency: 'usd' }, asAccount)).id);
  const seen: string[] = [];
  for await (const payout of stack.test.payouts.list({ limit: 100 }, asAccount)) seen.push(payout.id);
  t.equal(seen.length, 250);
  t.same(seen, [...created].reverse());
  const last = await stack.test.payouts.list({ limit: 3, ending_before: created[5] }, asAccount);
  t.same(
    last.data.map((p) => p.id),
    [created[8], created[7], created[6]],
  );
  t.equal(last.has_more, true);
});
