import t from 'tap';
import { approvedCommissions, payoutMerchant, startPayoutsPlatform } from '../helpers/payouts.ts';
import { createAffiliate } from '../helpers/commissions.ts';
import { attachPayments, fundedAccount } from './setup.ts';

// The rail never moves a payout during this file: what a sent platform payout refuses is seen while it is sent.
const { platform, service } = await startPayoutsPlatform(t);
const stack = await attachPayments(t, platform, { paymentsEnv: { PAYOUT_RAIL_STEP_MS: '3600000' } });

async function pendingPayout(m: Awaited<ReturnType<typeof payoutMerchant>>, email: string, details = true) {
  const affiliate = await createAffiliate(m.client, { email });
  if (details)
    await m.client.request('PUT', `/api/v1/affiliates/${affiliate.id}/payout_details`, {
      body: { method: 'bank', routing_number: '011000015', account_number: '000123456789' },
    });
  await approvedCommissions(platform, service, m.id, affiliate.id, [{ amount: '600.00' }]);
  const created = await m.client.post('/api/v1/payouts', { affiliate_ids: [affiliate.id] });
  return (created.body.data as { id: string; held_reason: string | null }[])[0]!;
}

const ledgerMovements = async () =>
  (await platform.sql<{ n: number }[]>`select count(*)::int as n from ledger_movements where kind = 'transfer'`)[0]!.n;

t.test('a payout sent through the platform follows its ledger payout only', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none']);
  await fundedAccount(stack, 50_000, {}, { merchant_id: m.id });
  const payout = await pendingPayout(m, 'ana@example.com');
  const sent = await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'sent', method: 'platform' });
  t.equal(sent.status, 200);
  const again = await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'sent', method: 'platform' });
  t.equal(again.status, 200, 'sending it again changes nothing');
  t.equal(again.body.reference, sent.body.reference);
  t.equal(await ledgerMovements(), 1, 'and moves no money twice');
  for (const move of [{ status: 'paid' }, { status: 'failed', failure_reason: 'bounced' }]) {
    const refused = await m.client.patch(`/api/v1/payouts/${payout.id}`, move);
    t.equal(refused.status, 409);
    t.equal(
      refused.body.error.message,
      `A payout sent through the platform becomes ${move.status} when its ledger payout does`,
    );
  }
  const cancel = await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'canceled' });
  t.equal(cancel.status, 409);
  t.equal((await m.client.get(`/api/v1/payouts/${payout.id}`)).body.status, 'sent');
});

t.test('refused before any money moves: a held payout, an affiliate without payout details', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=required']);
  await fundedAccount(stack, 50_000, {}, { merchant_id: m.id });
  const before = await ledgerMovements();
  const held = await pendingPayout(m, 'held@example.com');
  t.equal(held.held_reason, 'tax_form_required');
  const refusedHeld = await m.client.patch(`/api/v1/payouts/${held.id}`, { status: 'sent', method: 'platform' });
  t.equal(refusedHeld.status, 409);
  t.match(refusedHeld.body.error.message, /^The payout is held \(tax_form_required\)/);

  const other = await payoutMerchant(platform, ['tax_form_policy=none']);
  await fundedAccount(stack, 50_000, {}, { merchant_id: other.id });
  const bare = await pendingPayout(other, 'nodetails@example.com', false);
  const refusedBare = await other.client.patch(`/api/v1/payouts/${bare.id}`, { status: 'sent', method: 'platform' });
  t.equal(refusedBare.status, 409);
  t.equal(
    refusedBare.body.error.message,
    'The affiliate has no payout details on file to be paid through the platform',
  );
  t.equal(await ledgerMovements(), before, 'no money moved');

  // Another merchant's payout is not found, whatever the method.
  const foreign = await other.client.patch(`/api/v1/payouts/${held.id}`, { status: 'sent', method: 'platform' });
  t.equal(foreign.status, 404);
});
