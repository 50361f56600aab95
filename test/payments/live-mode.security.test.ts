import t from 'tap';
import { headers } from '@nats-io/nats-core';
import { PLATFORM_PAYOUT_SUBJECTS, RPC_OUTCOME_HEADER } from '@platform/shared/catalogue';
import { newId } from '@platform/shared/ids';
import { decodeJson, encodeJson } from '@platform/shared/nats';
import type { AffiliatePayoutRequest, PayoutSettledRequest } from '@platform/shared/payments/rpc';
import { bindPlatformAccount } from '../../scripts/admin/platform-accounts.ts';
import { dashboardMerchant, sessionRequest, signInHttp } from '../helpers/dashboard.ts';
import { eventually } from '../helpers/platform.ts';
import { fundedAccount, startPayments } from './setup.ts';

// Test money never becomes live money: live mode has none of the sandbox's test cards, a test key cannot bind an
// account to a merchant, and an affiliate payout (live money) draws on a live account only.
const stack = await startPayments(t, { paymentsEnv: { PAYOUT_RAIL_STEP_MS: '3600000' } });
const { platform } = stack;

const count = async (query: PromiseLike<readonly Record<string, unknown>[]>) => Number((await query)[0]!['n']);
const liveMovements = () => count(platform.sql`select count(*)::int as n from ledger_movements where livemode`);

t.test('a live key cannot charge a test card: Stripe’s answer for a test object in live mode', async (t) => {
  const refused = await stack.live.paymentIntents
    .create({ amount: 50_000, currency: 'usd', payment_method: 'pm_card_bypassPending', confirm: true })
    .then(
      () => null,
      (e: unknown) => e as { type: string; statusCode: number; code: string; param: string; message: string },
    );
  t.match(refused, {
    type: 'StripeInvalidRequestError',
    statusCode: 400,
    code: 'resource_missing',
    param: 'payment_method',
    message:
      "No such PaymentMethod: 'pm_card_bypassPending'; a similar object exists in test mode, but a live mode key was used to make this request.",
  });
  t.equal(await count(platform.sql`select count(*)::int as n from payment_intents where livemode`), 0, 'no intent');

  // An intent made without a method, then confirmed with one: refused the same way, and left as it was.
  const intent = await stack.live.paymentIntents.create({ amount: 1000, currency: 'usd' });
  for (const method of ['pm_card_visa', 'pm_card_bypassPending'])
    await t.rejects(stack.live.paymentIntents.confirm(intent.id, { payment_method: method }), {
      code: 'resource_missing',
      message: /a similar object exists in test mode, but a live mode key was used/,
    });
  t.equal((await stack.live.paymentIntents.retrieve(intent.id)).status, 'requires_payment_method');
  t.equal(await liveMovements(), 0, 'no live money moved');
  t.equal(await count(platform.sql`select count(*)::int as n from sandbox_processor_calls`), 0, 'nothing charged');
  // The same card in test mode still works.
  const testPaid = await stack.test.paymentIntents.create({
    amount: 1000,
    currency: 'usd',
    payment_method: 'pm_card_bypassPending',
    confirm: true,
  });
  t.equal(testPaid.status, 'succeeded');
});

t.test('only a live key binds an account to a merchant; a test key’s merchant_id is plain metadata', async (t) => {
  const merchantId = await stack.merchant('Bound');
  const testAccount = await stack.test.accounts.create({ type: 'express', metadata: { merchant_id: merchantId } });
  t.same(testAccount.metadata, { merchant_id: merchantId }, 'kept as metadata');
  const liveAccount = await stack.live.accounts.create({ type: 'express', metadata: { merchant_id: merchantId } });
  const bound = await platform.sql<{ id: string; merchant_id: string | null }[]>`
    select id, merchant_id from payment_accounts where id in (${testAccount.id}, ${liveAccount.id}) order by livemode`;
  t.same(bound, [
    { id: testAccount.id, merchant_id: null },
    { id: liveAccount.id, merchant_id: merchantId },
  ]);
  // A test key naming any merchant, real or not, is not refused either: nothing is bound.
  const unknown = await stack.test.accounts.create({ type: 'express', metadata: { merchant_id: 'mer_nope' } });
  t.same(unknown.metadata, { merchant_id: 'mer_nope' });
});

t.test('test-mode funds never pay an affiliate payout, even bound to the merchant by the operator', async (t) => {
  const merchantId = await stack.merchant('Tester');
  const testFunds = await fundedAccount(stack, 50_000, {}, {}, { live: false });
  const binding = await bindPlatformAccount(platform.sql, testFunds.id, merchantId);
  t.match(binding, { id: testFunds.id, livemode: false, merchant_id: merchantId });
  const request: AffiliatePayoutRequest = {
    request_id: 'req_test_money',
    deadline: Date.now() + 5000,
    merchant_id: merchantId,
    payout_id: 'po_01m8testmoneypayout00000001',
    affiliate_id: 'aff_01m8affiliate000000000001',
    amount: '60.00',
    currency: 'USD',
    destination_last4: '6789',
  };
  const ask = async () =>
    decodeJson<Record<string, unknown>>(
      (
        await platform.nc.request(PLATFORM_PAYOUT_SUBJECTS.pay(platform.prefix), encodeJson(request), {
          timeout: 5000,
        })
      ).data,
    );
  t.match(await ask(), {
    status: 400,
    error: { code: 'no_connected_account', message: /no connected account in live mode/ },
  });
  t.same((await stack.test.balance.retrieve({}, { stripeAccount: testFunds.id })).available, [
    { amount: 50_000, currency: 'usd' },
  ]);
  t.equal(await count(platform.sql`select count(*)::int as n from payment_payouts`), 0, 'no payout made');

  // A live account bound by a live key, funded with live money, pays it.
  const live = await fundedAccount(stack, 10_000, {}, { merchant_id: merchantId });
  t.match(await ask(), { ledger_payout_id: /^po_/ });
  t.same((await stack.live.balance.retrieve({}, { stripeAccount: live.id })).available, [
    { amount: 4000, currency: 'usd' },
  ]);
  const [payout] = await platform.sql`select livemode, funded_by from payment_payouts`;
  t.same(payout, { livemode: true, funded_by: live.id });
});

t.test('the dashboard funds a test account with test cards, and never a live one', async (t) => {
  const m = await dashboardMerchant(platform);
  const account = await stack.live.accounts.create({ type: 'express', metadata: { merchant_id: m.id } });
  const session = await signInHttp(platform.baseUrl, m.email);
  const fund = await sessionRequest(platform.baseUrl, session, 'POST', '/dashboard/api/balance/fund', {
    amount: '500.00',
    currency: 'usd',
    payment_method: 'pm_card_bypassPending',
  });
  t.equal(fund.status, 409);
  t.match(fund.body, { error: { code: 'CONFLICT', message: /live account is funded by real payments/ } });
  t.same((await stack.live.balance.retrieve({}, { stripeAccount: account.id })).available, []);
  const made = platform.sql`select count(*)::int as n from payment_intents where transfer_destination = ${account.id}`;
  t.equal(await count(made), 0, 'no payment intent made');
});

t.test('an affiliate payout paid from test funds before 028 is reported failed, never paid', async (t) => {
  const merchantId = await stack.merchant('Before');
  const id = newId('po');
  await platform.sql`
    insert into payment_payouts (id, livemode, holder, amount, currency, status, balance_transaction, arrival_date,
      affiliate_payout_id, merchant_id, funded_by)
    values (${id}, false, 'aff_01m8affiliate000000000002', 6000, 'usd', 'paid', ${newId('txn')}, now(),
      'po_01m8oldtestpayout000000001', ${merchantId}, ${newId('acct')})`;
  // The commissions service's side of the report, answered here.
  const reports: PayoutSettledRequest[] = [];
  const sub = platform.nc.subscribe(PLATFORM_PAYOUT_SUBJECTS.settled(platform.prefix), {
    callback: (_err, msg) => {
      reports.push(decodeJson<PayoutSettledRequest>(msg.data));
      const h = headers();
      h.set(RPC_OUTCOME_HEADER, 'ok');
      msg.respond(encodeJson({}), { headers: h });
    },
  });
  t.teardown(() => sub.unsubscribe());
  await eventually(async () => (reports.some((r) => r.ledger_payout_id === id) ? true : undefined), 10_000, 'a report');
  t.match(
    reports.find((r) => r.ledger_payout_id === id),
    {
      payout_id: 'po_01m8oldtestpayout000000001',
      status: 'failed',
      failure_reason: 'test_mode_funds',
    },
  );
});
