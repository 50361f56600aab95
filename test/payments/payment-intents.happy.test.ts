import t from 'tap';
import { startPayments } from './setup.ts';

t.test('payment intents through the Stripe SDK, and the ledger behind them', async (t) => {
  const stack = await startPayments(t);
  const { test } = stack;
  const account = await test.accounts.create({ type: 'express', email: 'shop@example.com' });

  // pm_card_visa, confirmed at creation, funds a connected account (transfer_data.destination).
  const paid = await test.paymentIntents.create({
    amount: 2000,
    currency: 'usd',
    payment_method: 'pm_card_visa',
    confirm: true,
    transfer_data: { destination: account.id },
    metadata: { order: '6735' },
    description: 'Order 6735',
  });
  t.match(paid.id, /^pi_/);
  t.equal(paid.object, 'payment_intent');
  t.equal(paid.status, 'succeeded');
  t.equal(paid.amount_received, 2000);
  t.equal(paid.currency, 'usd');
  t.same(paid.transfer_data, { destination: account.id });
  t.same(paid.metadata, { order: '6735' });
  t.same(await test.paymentIntents.retrieve(paid.id), paid);

  // Created, then confirmed: requires_confirmation → succeeded.
  const later = await test.paymentIntents.create({ amount: 1000, currency: 'usd', payment_method: 'pm_card_visa' });
  t.equal(later.status, 'requires_confirmation');
  t.equal((await test.paymentIntents.confirm(later.id)).status, 'succeeded');

  // Declined: StripeCardError card_declined, the intent back to requires_payment_method.
  const declined = await test.paymentIntents.create({ amount: 500, currency: 'usd' });
  t.equal(declined.status, 'requires_payment_method');
  const err = await test.paymentIntents.confirm(declined.id, { payment_method: 'pm_card_chargeDeclined' }).then(
    () => null,
    (e: unknown) =>
      e as {
        type: string;
        code: string;
        decline_code: string;
        statusCode: number;
        payment_intent: { id: string; status: string };
      },
  );
  t.ok(err, 'the decline throws');
  t.equal(err!.type, 'StripeCardError');
  t.equal(err!.statusCode, 402);
  t.equal(err!.code, 'card_declined');
  t.equal(err!.decline_code, 'generic_decline');
  t.equal(err!.payment_intent.id, declined.id);
  t.equal(err!.payment_intent.status, 'requires_payment_method');
  const afterDecline = await test.paymentIntents.retrieve(declined.id);
  t.equal(afterDecline.status, 'requires_payment_method');
  t.equal(afterDecline.last_payment_error?.code, 'card_declined');
  // A declined create-and-confirm still creates the intent, as Stripe does.
  await t.rejects(
    test.paymentIntents.create({
      amount: 700,
      currency: 'usd',
      payment_method: 'pm_card_chargeDeclined',
      confirm: true,
    }),
    { type: 'StripeCardError', code: 'card_declined' },
  );

  // 3D Secure: requires_action, then confirmed again once the customer has authenticated.
  const secure = await test.paymentIntents.create({
    amount: 900,
    currency: 'usd',
    payment_method: 'pm_card_authenticationRequired',
    confirm: true,
  });
  t.equal(secure.status, 'requires_action');
  t.equal(secure.next_action?.type, 'use_stripe_sdk');
  t.equal((await test.paymentIntents.confirm(secure.id)).status, 'succeeded');

  // Manual capture (part of it), and a cancel.
  const held = await test.paymentIntents.create({
    amount: 3000,
    currency: 'eur',
    payment_method: 'pm_card_visa',
    capture_method: 'manual',
    confirm: true,
  });
  t.equal(held.status, 'requires_capture');
  t.equal(held.amount_capturable, 3000);
  const captured = await test.paymentIntents.capture(held.id, { amount_to_capture: 2500 });
  t.equal(captured.status, 'succeeded');
  t.equal(captured.amount_received, 2500);
  const dropped = await test.paymentIntents.create({ amount: 100, currency: 'usd' });
  const canceled = await test.paymentIntents.cancel(dropped.id, { cancellation_reason: 'abandoned' });
  t.equal(canceled.status, 'canceled');
  t.equal(canceled.cancellation_reason, 'abandoned');

  // The connected account's balance transaction: 2000 less 2.9 % + 30 = 88, pending.
  const forAccount = (await test.rawRequest(
    'GET',
    '/v1/transactions',
    {},
    { stripeAccount: account.id },
  )) as unknown as {
    object: string;
    url: string;
    data: Record<string, unknown>[];
  };
  t.equal(forAccount.object, 'list');
  t.equal(forAccount.url, '/v1/transactions');
  t.equal(forAccount.data.length, 1);
  t.match(forAccount.data[0], {
    object: 'balance_transaction',
    amount: 2000,
    fee: 88,
    net: 1912,
    currency: 'usd',
    type: 'payment',
    status: 'pending',
    source: paid.id,
  });
  t.ok((forAccount.data[0]!['available_on'] as number) >= (forAccount.data[0]!['created'] as number) + 172_800 - 1);

  // The platform's own: the three platform charges (1000, 900 usd; 2500 eur), filterable by type and created.
  const platform = await test.balanceTransactions.list({ limit: 10 });
  t.same(
    platform.data.map((x) => [x.type, x.amount, x.fee, x.currency]),
    [
      ['charge', 2500, 102, 'eur'], // 72.5 rounds half-even to 72, plus 30
      ['charge', 900, 56, 'usd'],
      ['charge', 1000, 59, 'usd'],
    ],
  );
  const now = Math.floor(Date.now() / 1000);
  const filtered = (await test.rawRequest(
    'GET',
    `/v1/transactions?type=payout&created[gte]=${now - 60}`,
    undefined,
  )) as unknown as { data: unknown[] };
  t.same(filtered.data, []);
  const inRange = (await test.rawRequest(
    'GET',
    `/v1/transactions?type=charge&created[gte]=${now - 60}&created[lte]=${now + 60}`,
    undefined,
  )) as unknown as { data: unknown[] };
  t.equal(inRange.data.length, 3);

  // Double entry: every movement sums to zero, and the balances are what the entries say.
  const unbalanced = await stack.platform.sql`
    select movement_id from ledger_entries group by movement_id, currency having sum(amount) <> 0`;
  t.same(unbalanced, []);
  const balance = await test.balance.retrieve({}, { stripeAccount: account.id });
  t.same(balance.pending, [{ amount: 1912, currency: 'usd' }]);
  t.same(balance.available, []);
  const list = await test.paymentIntents.list({ limit: 100 });
  t.equal(list.data.length, 7, 'the platform lists its own intents');
});
