import t from 'tap';
import { PLATFORM_PAYOUT_SUBJECTS, RPC_OUTCOME_HEADER } from '@platform/shared/catalogue';
import { decodeJson, encodeJson } from '@platform/shared/nats';
import type { AffiliatePayoutRequest } from '@platform/shared/payments/rpc';
import { fundedAccount, startPayments } from './setup.ts';

t.test('the ledger side of a platform payout: idempotent per affiliate payout, refused without funds', async (t) => {
  const stack = await startPayments(t, { paymentsEnv: { PAYOUT_RAIL_STEP_MS: '3600000' } });
  const { platform } = stack;
  const merchantId = await stack.merchant();
  const account = await fundedAccount(stack, 10_000, {}, { merchant_id: merchantId });
  const ask = async (over: Partial<AffiliatePayoutRequest>) => {
    const request: AffiliatePayoutRequest = {
      request_id: 'req_test',
      deadline: Date.now() + 5000,
      merchant_id: merchantId,
      payout_id: 'po_01m8affiliatepayout0000001',
      affiliate_id: 'aff_01m8affiliate000000000001',
      amount: '60.00',
      currency: 'USD',
      destination_last4: '6789',
      ...over,
    };
    const msg = await platform.nc.request(PLATFORM_PAYOUT_SUBJECTS.pay(platform.prefix), encodeJson(request), {
      timeout: 5000,
    });
    return { outcome: msg.headers?.get(RPC_OUTCOME_HEADER), body: decodeJson<Record<string, unknown>>(msg.data) };
  };

  // The same affiliate payout asked five times at once: one ledger payout, one transfer.
  const answers = await Promise.all(Array.from({ length: 5 }, () => ask({})));
  t.same(new Set(answers.map((a) => a.outcome)), new Set(['ok']));
  const ids = new Set(answers.map((a) => a.body['ledger_payout_id']));
  t.equal(ids.size, 1);
  const [ledgerPayoutId] = [...ids] as string[];
  t.match(ledgerPayoutId, /^po_/);
  const transfers = await platform.sql`select id from ledger_movements where kind = 'transfer'`;
  t.equal(transfers.length, 1);
  t.same((await stack.live.balance.retrieve({}, { stripeAccount: account.id })).available, [
    { amount: 4000, currency: 'usd' },
  ]);
  const [row] = await platform.sql`select holder, amount::int, funded_by, affiliate_payout_id from payment_payouts`;
  t.same(row, {
    holder: 'aff_01m8affiliate000000000001',
    amount: 6000,
    funded_by: account.id,
    affiliate_payout_id: 'po_01m8affiliatepayout0000001',
  });

  const short = await ask({ payout_id: 'po_01m8affiliatepayout0000002', amount: '40.01' });
  t.equal(short.outcome, 'error');
  t.match(short.body, { status: 400, error: { type: 'invalid_request_error', code: 'balance_insufficient' } });
  const nobody = await ask({ payout_id: 'po_01m8affiliatepayout0000003', merchant_id: await stack.merchant('Other') });
  t.match(nobody.body, { status: 400, error: { code: 'no_connected_account' } });
  const odd = await ask({ payout_id: 'po_01m8affiliatepayout0000004', amount: '1.001' });
  t.match(odd.body, { status: 400, error: { param: 'amount' } });
  // Zero converts like any amount, so the payout refuses it itself: asked twice, refused twice, nothing moved.
  const payoutsBefore = await platform.sql`select id from payment_payouts`;
  for (const zero of ['0', '0.00']) {
    const none = await ask({ payout_id: 'po_01m8affiliatepayout0000005', amount: zero });
    t.match(none.body, { status: 400, error: { param: 'amount' } }, `amount ${zero} is refused`);
  }
  t.same(await platform.sql`select id from payment_payouts`, payoutsBefore, 'a zero payout makes no ledger payout');
  t.same(
    await platform.sql`select movement_id from ledger_entries group by movement_id, currency having sum(amount) <> 0`,
    [],
  );
});
