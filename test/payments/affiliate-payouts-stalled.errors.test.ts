import t from 'tap';
import { approvedCommissions, payoutMerchant, payoutWebhooks, startPayoutsPlatform } from '../helpers/payouts.ts';
import { eventually } from '../helpers/platform.ts';
import { verifyWebhook } from '../helpers/receiver.ts';
import { startDispatcher } from '../helpers/webhooks.ts';
import { createAffiliate } from '../helpers/commissions.ts';
import { PLATFORM_PAYOUT_SUBJECTS, RPC_OUTCOME_HEADER } from '@platform/shared/catalogue';
import { encodeJson } from '@platform/shared/nats';
import type { AffiliatePayoutRequest } from '@platform/shared/payments/rpc';
import { attachPayments, fundedAccount } from './setup.ts';

const { platform, service } = await startPayoutsPlatform(t);
await startDispatcher(t, platform);
const stack = await attachPayments(t, platform, {
  paymentsEnv: { PAYOUT_RAIL_STEP_MS: '100', PAYMENTS_CLOCK_INTERVAL_MS: '50' },
});

/** An affiliate with a US bank account on file and one approved commission of 60.00 USD (10 % of 600). */
async function payee(m: Awaited<ReturnType<typeof payoutMerchant>>, email: string, accountNumber: string) {
  const affiliate = await createAffiliate(m.client, { email });
  const details = await m.client.request('PUT', `/api/v1/affiliates/${affiliate.id}/payout_details`, {
    body: { method: 'bank', routing_number: '011000015', account_number: accountNumber },
  });
  if (details.status !== 200) throw new Error(`payout details answered ${details.status}: ${details.text}`);
  const commissions = await approvedCommissions(platform, service, m.id, affiliate.id, [{ amount: '600.00' }]);
  return { affiliate, commissions };
}

t.test(
  'a funded merchant pays affiliate payouts with method platform: the ledger pays them, webhooks follow',
  async (t) => {
    const m = await payoutMerchant(platform, ['tax_form_policy=none']);
    const { receiver, secret } = await payoutWebhooks(t, m);
    // The merchant's connected account, funded by a payment with it as the transfer destination: 500.00 available.
    const account = await fundedAccount(stack, 50_000, {}, { merchant_id: m.id });
    const asAccount = { stripeAccount: account.id };

    const paidOnes = [
      await payee(m, 'ana@example.com', '000123456789'),
      await payee(m, 'ben@example.com', '000123451234'),
      await payee(m, 'cy@example.com', '000987654321'),
    ];
    const failing = await payee(m, 'dee@example.com', '000111111116');
    const created = await m.client.post('/api/v1/payouts', {});
    t.equal(created.status, 201);
    const payouts = created.body.data as { id: string; affiliate_id: string; amount: number }[];
    t.equal(payouts.length, 4);
    const payoutOf = (affiliateId: string) => payouts.find((p) => p.affiliate_id === affiliateId)!;

    for (const p of payouts) {
      const sent = await m.client.patch(`/api/v1/payouts/${p.id}`, { status: 'sent', method: 'platform' });
      t.equal(sent.status, 200, sent.text);
      t.match(sent.body, { status: 'sent', method: 'platform', reference: /^po_/ });
    }
    // Each transfer left the merchant's balance as its payout was sent: a transfer of -60.00 naming it. (The balance
    // itself is not read here: the failing payout's rail may already have returned its 60.00.)
    const moved = (await stack.live.balanceTransactions.list({ limit: 100 }, asAccount)).data;
    for (const p of payouts)
      t.equal(
        moved
          .filter((b) => b.type === 'transfer' && b.description === `Affiliate payout ${p.id}`)
          .map((b) => b.amount)
          .join(),
        '-6000',
        `one transfer of -60.00 for ${p.id}`,
      );

    const settled = await eventually(
      async () => {
        const list = await m.client.get('/api/v1/payouts?limit=10');
        const statuses = (list.body.data as { status: string }[]).map((p) => p.status);
        return statuses.every((s) => s === 'paid' || s === 'failed') ? list.body.data : undefined;
      },
      15_000,
      'the payouts to settle',
    );
    for (const { affiliate } of paidOnes)
      t.equal(settled.find((p: { affiliate_id: string }) => p.affiliate_id === affiliate.id).status, 'paid');
    const failed = settled.find((p: { affiliate_id: string }) => p.affiliate_id === failing.affiliate.id);
    t.match(failed, { status: 'failed', failure_reason: 'no_account' });
    const [commission] = await platform.sql`select status from commissions where id = ${failing.commissions[0]!}`;
    t.equal(commission!['status'], 'approved', "the failed payout's commission is approved again");
    for (const { commissions } of paidOnes) {
      const [row] = await platform.sql`select status from commissions where id = ${commissions[0]!}`;
      t.equal(row!['status'], 'paid');
    }
    // The failed payout's 60.00 came back to the merchant's account.
    t.same((await stack.live.balance.retrieve({}, asAccount)).available, [{ amount: 32_000, currency: 'usd' }]);

    const hooks = await eventually(
      async () => (receiver.received.length >= 8 ? receiver.received : undefined),
      15_000,
      'the webhooks',
    );
    const count = (type: string) => hooks.filter((h) => h.type === type).length;
    t.same([count('payout.sent'), count('payout.paid'), count('payout.failed')], [4, 3, 1]);
    const failedHook = hooks.find((h) => h.type === 'payout.failed')!;
    const payload = verifyWebhook(secret, failedHook) as {
      data: { payout_id: string; failure_reason: string };
    };
    t.equal(payload.data.payout_id, payoutOf(failing.affiliate.id).id);
    t.equal(payload.data.failure_reason, 'no_account');

    t.same(
      await platform.sql`select movement_id from ledger_entries group by movement_id, currency having sum(amount) <> 0`,
      [],
    );
    t.notMatch(
      JSON.stringify(await platform.sql`select * from payment_payouts`),
      '000123456789',
      'no account number kept',
    );
  },
);

t.test('without a connected account, or without the funds, a platform payout stays pending', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none']);
  await payee(m, 'eve@example.com', '000123456789');
  const [payout] = (await m.client.post('/api/v1/payouts', {})).body.data as { id: string }[];
  const noAccount = await m.client.patch(`/api/v1/payouts/${payout!.id}`, { status: 'sent', method: 'platform' });
  t.equal(noAccount.status, 409);
  t.match(noAccount.body, { error: { code: 'CONFLICT', message: /no connected account in live mode/ } });
  await fundedAccount(stack, 1000, {}, { merchant_id: m.id });
  const short = await m.client.patch(`/api/v1/payouts/${payout!.id}`, { status: 'sent', method: 'platform' });
  t.equal(short.status, 409);
  t.match(short.body, {
    error: {
      code: 'CONFLICT',
      message:
        /^The payout cannot be paid through the platform: The connected account acct_[0-9a-z]{26} does not have 60\.00 USD available\.$/,
    },
  });
  t.equal((await m.client.get(`/api/v1/payouts/${payout!.id}`)).body.status, 'pending');
  const withReference = await m.client.patch(`/api/v1/payouts/${payout!.id}`, {
    status: 'sent',
    method: 'platform',
    reference: 'MY-REF',
  });
  t.equal(withReference.status, 400);
  t.same(withReference.body.error.details, [
    { path: 'reference', message: 'is set by the platform (the ledger payout) with method platform' },
  ]);
});

t.test('a ledger payout the commissions service never recorded as sent still ends its payout', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none']);
  await fundedAccount(stack, 10_000, {}, { merchant_id: m.id });
  const { affiliate } = await payee(m, 'fay@example.com', '000123456789');
  const [payout] = (await m.client.post('/api/v1/payouts', {})).body.data as { id: string }[];
  // What the commissions service asks when the payout is sent, answered, as if it then stopped before its commit.
  const request: AffiliatePayoutRequest = {
    request_id: 'req_lost_commit',
    deadline: Date.now() + 5000,
    merchant_id: m.id,
    payout_id: payout!.id,
    affiliate_id: affiliate.id,
    amount: '60.00',
    currency: 'USD',
    destination_last4: '6789',
  };
  const answer = await platform.nc.request(PLATFORM_PAYOUT_SUBJECTS.pay(platform.prefix), encodeJson(request), {
    timeout: 5000,
  });
  t.equal(answer.headers?.get(RPC_OUTCOME_HEADER), 'ok');
  const paid = await eventually(
    async () => {
      const p = await m.client.get(`/api/v1/payouts/${payout!.id}`);
      return p.body.status === 'paid' ? p.body : undefined;
    },
    15_000,
    'the payout to be paid',
  );
  t.match(paid, { method: 'platform', reference: /^po_/, status: 'paid' });
  t.ok(paid.sent_at, 'sent on the way');
});
