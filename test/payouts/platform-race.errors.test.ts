import t from 'tap';
import { createAffiliate } from '../helpers/commissions.ts';
import { approvedCommissions, payoutMerchant, startPayoutsPlatform, type PayoutMerchant } from '../helpers/payouts.ts';
import { attachPayments, fundedAccount } from '../payments/setup.ts';

/**
 * Platform payouts sent and canceled at the same time, over real HTTP: whichever comes first wins, and money moves
 * only for a payout that stays sending, sent or paid. The commissions a cancel released are grouped again and sent
 * again; afterwards no commission is in two payouts that both moved money, and every ledger payout of the payments
 * service belongs to exactly one payout that was not canceled.
 */
t.setTimeout(180_000);

const { platform, service, clock } = await startPayoutsPlatform(t, { env: { DATABASE_POOL_SIZE: '10' } });
// The rail never settles a ledger payout during this file: what is compared is what the send and cancel left.
const stack = await attachPayments(t, platform, { paymentsEnv: { PAYOUT_RAIL_STEP_MS: '3600000' } });

const AFFILIATES = 12;

async function payees(m: PayoutMerchant): Promise<void> {
  for (let i = 0; i < AFFILIATES; i++) {
    const affiliate = await createAffiliate(m.client, { email: `race${i}@example.com` });
    const details = await m.client.request('PUT', `/api/v1/affiliates/${affiliate.id}/payout_details`, {
      body: { method: 'bank', routing_number: '011000015', account_number: `0001234567${String(i).padStart(2, '0')}` },
    });
    if (details.status !== 200) throw new Error(`payout details answered ${details.status}: ${details.text}`);
    await approvedCommissions(platform, service, m.id, affiliate.id, [{ amount: '600.00' }, { amount: '150.00' }]);
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Every pending payout of the merchant sent through the platform and canceled at once: for half of them the send
 * starts first, for the other half the cancel, the other following within a few milliseconds.
 */
async function race(m: PayoutMerchant, round: number): Promise<number[]> {
  const created = await m.client.post('/api/v1/payouts', {});
  if (created.status !== 201) throw new Error(`creating payouts answered ${created.status}: ${created.text}`);
  const ids = (created.body.data as { id: string }[]).map((p) => p.id);
  const answers = await Promise.all(
    ids.flatMap((id, i) => {
      const lag = (i * (round + 1)) % 4;
      const [sendAfter, cancelAfter] = (i + round) % 2 === 0 ? [0, lag] : [lag, 0];
      return [
        pause(sendAfter).then(() => m.client.patch(`/api/v1/payouts/${id}`, { status: 'sent', method: 'platform' })),
        pause(cancelAfter).then(() => m.client.patch(`/api/v1/payouts/${id}`, { status: 'canceled' })),
      ];
    }),
  );
  return answers.map((a) => a.status);
}

t.test('send(platform) against cancel on many payouts: each commission is paid at most once', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none']);
  await fundedAccount(stack, 1_000_000, {}, { merchant_id: m.id });
  await payees(m);

  const statuses: number[] = [];
  for (let round = 0; round < 4; round++) statuses.push(...(await race(m, round)));
  t.same(
    statuses.filter((s) => s !== 200 && s !== 409 && s !== 503),
    [],
    'every answer is 200 (the send or the cancel won), 409 (the other one had) or 503 (no answer in time)',
  );
  // A send the payment service did not answer in time (a loaded machine) is settled by the background pass.
  clock.advance(61_000);
  await service.recheckSendingPayouts();

  const payouts = await platform.sql<{ id: string; status: string; method: string | null; reference: string }[]>`
    select id, status, method, reference from payouts where merchant_id = ${m.id}`;
  const byId = new Map(payouts.map((p) => [p.id, p]));
  const ledger = await platform.sql<{ id: string; affiliate_payout_id: string; amount: number }[]>`
    select id, affiliate_payout_id, amount::int as amount from payment_payouts where merchant_id = ${m.id}`;
  t.ok(ledger.length > 0, `${ledger.length} ledger payouts made`);
  const canceled = payouts.filter((p) => p.status === 'canceled');
  t.ok(canceled.length > 0, `${canceled.length} payouts canceled`);
  for (const l of ledger) {
    const payout = byId.get(l.affiliate_payout_id);
    t.ok(
      payout && ['sending', 'sent', 'paid'].includes(payout.status),
      `ledger payout ${l.id} pays a payout that was not canceled (${payout?.id}: ${payout?.status})`,
    );
    if (payout?.status === 'sent') t.equal(payout.reference, l.id, `${payout.id}: its reference is the ledger payout`);
  }
  t.same(
    payouts.filter((p) => p.status === 'sending'),
    [],
    'none left sending',
  );
  for (const p of payouts)
    if (p.status === 'sent')
      t.ok(
        ledger.some((l) => l.affiliate_payout_id === p.id),
        `${p.id} (${p.status}) has its ledger payout`,
      );

  // No commission in two payouts that both moved money.
  const paidTwice = await platform.sql`
    select pc.commission_id, count(*)::int as payouts from payout_commissions pc
    join payment_payouts l on l.affiliate_payout_id = pc.payout_id
    where pc.merchant_id = ${m.id}
    group by pc.commission_id having count(*) > 1`;
  t.same(paidTwice, [], 'no commission paid by two ledger payouts');

  // What moved equals what the moving payouts hold: 60.00 + 15.00 per affiliate at most, in cents.
  const moved = ledger.reduce((sum, l) => sum + l.amount, 0);
  t.ok(moved <= AFFILIATES * 7500, `${moved} cents moved, no more than the commissions are worth`);
  const [held] = await platform.sql<{ cents: number }[]>`
    select coalesce(sum(c.amount * 100), 0)::int as cents from commissions c
    where c.merchant_id = ${m.id} and exists (
      select 1 from payout_commissions pc join payment_payouts l on l.affiliate_payout_id = pc.payout_id
      where pc.merchant_id = c.merchant_id and pc.commission_id = c.id)`;
  t.equal(moved, held!.cents, 'the ledger moved exactly the commissions of the payouts it paid');
});
