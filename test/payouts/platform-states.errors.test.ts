import t from 'tap';
import { PLATFORM_PAYOUT_SUBJECTS, RPC_OUTCOME_HEADER } from '@platform/shared/catalogue';
import { newId } from '@platform/shared/ids';
import { encodeJson } from '@platform/shared/nats';
import type { PayoutSettledRequest } from '@platform/shared/payments/rpc';
import { createAffiliate } from '../helpers/commissions.ts';
import { approvedCommissions, payoutMerchant, startPayoutsPlatform, type PayoutMerchant } from '../helpers/payouts.ts';
import { attachPayments, fundedAccount } from '../payments/setup.ts';

/**
 * A platform payout is claimed `sending` before the payment service is asked, and stays so until the payment service
 * answers: it cannot be canceled, paid or failed by hand meanwhile, and the same request again (or the background
 * pass, for one left sending) completes it. Settled reports move a payout from whatever state it is in, and one
 * that disagrees with its ledger payout is acknowledged, logged and counted, never applied.
 */
t.setTimeout(120_000);

const { platform, service, clock, logs } = await startPayoutsPlatform(t);

interface Payout {
  id: string;
  status: string;
  method: string | null;
  reference: string | null;
  commission_ids: string[];
  sent_at: string | null;
}

/** An affiliate with a bank account on file and a pending payout of one 60.00 USD commission. */
async function pendingPayout(m: PayoutMerchant, email: string): Promise<Payout> {
  const affiliate = await createAffiliate(m.client, { email });
  const details = await m.client.request('PUT', `/api/v1/affiliates/${affiliate.id}/payout_details`, {
    body: { method: 'bank', routing_number: '011000015', account_number: '000123456789' },
  });
  if (details.status !== 200) throw new Error(`payout details answered ${details.status}: ${details.text}`);
  await approvedCommissions(platform, service, m.id, affiliate.id, [{ amount: '600.00' }]);
  const created = await m.client.post('/api/v1/payouts', { affiliate_ids: [affiliate.id] });
  return (created.body.data as Payout[])[0]!;
}

const get = async (m: PayoutMerchant, id: string) => (await m.client.get(`/api/v1/payouts/${id}`)).body as Payout;
const sendOnPlatform = (m: PayoutMerchant, id: string) =>
  m.client.patch(`/api/v1/payouts/${id}`, { status: 'sent', method: 'platform' });

const m = await payoutMerchant(platform, ['tax_form_policy=none']);
const byRetry = await pendingPayout(m, 'retry@example.com');
const byPass = await pendingPayout(m, 'pass@example.com');
const byReport = await pendingPayout(m, 'report@example.com');

t.test('no answer from the payment service: 503, and the payout stays sending, out of reach', async (t) => {
  // No payments service runs yet: nobody answers the request.
  for (const p of [byRetry, byPass, byReport]) {
    const sent = await sendOnPlatform(m, p.id);
    t.equal(sent.status, 503, sent.text);
    t.equal(sent.body.error.code, 'UNAVAILABLE');
    t.match(await get(m, p.id), { status: 'sending', method: 'platform', reference: null, sent_at: null });
  }
  const listed = await m.client.get('/api/v1/payouts?status=sending');
  t.equal(listed.status, 200);
  t.same((listed.body.data as Payout[]).map((p) => p.id).sort(), [byRetry.id, byPass.id, byReport.id].sort());

  const cancel = await m.client.patch(`/api/v1/payouts/${byRetry.id}`, { status: 'canceled' });
  t.equal(cancel.status, 409);
  t.equal(
    cancel.body.error.message,
    'A sending payout cannot move to canceled: its payment through the platform is under way; allowed moves from sending: sent (with method platform, which asks the payment service again)',
  );
  for (const move of [
    { status: 'paid' },
    { status: 'failed', failure_reason: 'bounced' },
    { status: 'sent', method: 'manual', reference: 'BANK-1' },
  ]) {
    const refused = await m.client.patch(`/api/v1/payouts/${byRetry.id}`, move);
    t.equal(refused.status, 409, `${move.status} by hand is refused`);
    t.match(refused.body.error.message, /^A sending payout cannot move to /);
  }
  t.equal((await get(m, byRetry.id)).status, 'sending');
  const [links] = await platform.sql<{ open: number }[]>`
    select count(*)::int as open from payout_commissions where payout_id = ${byRetry.id} and released_at is null`;
  t.equal(links!.open, 1, 'its commission stays in it');
});

/** The payments service from the second test on; its rail never settles a ledger payout here (reports are sent by hand). */
async function startPaymentsService() {
  const stack = await attachPayments(t, platform, { paymentsEnv: { PAYOUT_RAIL_STEP_MS: '3600000' } });
  await fundedAccount(stack, 100_000, {}, { merchant_id: m.id });
}

const ledgerPayoutOf = async (payoutId: string) =>
  (await platform.sql<{ id: string }[]>`select id from payment_payouts where affiliate_payout_id = ${payoutId}`)[0]?.id;

t.test('the same request again completes a sending payout; the background pass completes one left', async (t) => {
  await startPaymentsService();
  const retried = await sendOnPlatform(m, byRetry.id);
  t.equal(retried.status, 200, retried.text);
  t.match(retried.body, { status: 'sent', method: 'platform', reference: await ledgerPayoutOf(byRetry.id) });
  const again = await sendOnPlatform(m, byRetry.id);
  t.equal(again.status, 200);
  t.equal(again.body.reference, retried.body.reference, 'asked once more, the same ledger payout');

  t.equal(await service.recheckSendingPayouts(), 0, 'a payout sending for less than the bound is left alone');
  t.equal((await get(m, byPass.id)).status, 'sending');
  clock.advance(61_000);
  t.equal(await service.recheckSendingPayouts(), 2, 'both payouts left sending are asked about');
  for (const p of [byPass, byReport])
    t.match(await get(m, p.id), { status: 'sent', method: 'platform', reference: await ledgerPayoutOf(p.id) });
  const [moved] = await platform.sql<{ n: number }[]>`
    select count(*)::int as n from payment_payouts where merchant_id = ${m.id}`;
  t.equal(moved!.n, 3, 'one ledger payout each, however often asked');
});

t.test('refused for good: pending again, unless an earlier request may still move money', async (t) => {
  const poor = await payoutMerchant(platform, ['tax_form_policy=none']);
  const p = await pendingPayout(poor, 'poor@example.com');
  // A request to the payment service claimed it, whose deadline passed 3 s ago: it may still be committing.
  await platform.sql`
    update payouts set status = 'sending', method = 'platform', send_attempted_at = now(),
      send_deadline = now() - interval '3 seconds', send_destination_last4 = '6789'
    where id = ${p.id}`;
  const unsure = await sendOnPlatform(poor, p.id);
  t.equal(unsure.status, 503, unsure.text);
  t.equal((await get(poor, p.id)).status, 'sending', 'it stays sending');
  await platform.sql`update payouts set send_deadline = now() - interval '10 seconds' where id = ${p.id}`;
  const refused = await sendOnPlatform(poor, p.id);
  t.equal(refused.status, 409);
  t.match(refused.body.error.message, /no connected account/);
  t.match(await get(poor, p.id), { status: 'pending', method: null });
  const canceled = await poor.client.patch(`/api/v1/payouts/${p.id}`, { status: 'canceled' });
  t.equal(canceled.status, 200, 'and can be canceled');
});

/** Sends a settled report as the payments service does; answers whether it was acknowledged. */
async function report(merchantId: string, payoutId: string, ledgerPayoutId: string, status: 'paid' | 'failed') {
  const request: PayoutSettledRequest = {
    request_id: newId('req'),
    deadline: Date.now() + 5000,
    merchant_id: merchantId,
    payout_id: payoutId,
    ledger_payout_id: ledgerPayoutId,
    status,
    failure_reason: status === 'failed' ? 'account_closed' : null,
  };
  const answer = await platform.nc.request(PLATFORM_PAYOUT_SUBJECTS.settled(platform.prefix), encodeJson(request), {
    timeout: 5000,
  });
  return answer.headers?.get(RPC_OUTCOME_HEADER);
}

async function mismatches(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${service.opsPort}/metrics`)).text();
  return Number(/^platform_payout_mismatches_total\{service="commissions"\} (\S+)$/m.exec(text)![1]);
}

const commissionStatus = async (p: Payout) =>
  (await platform.sql<{ status: string }[]>`select status from commissions where id = ${p.commission_ids[0]!}`)[0]!
    .status;

t.test('a settled report moves the payout from every state, and changes nothing twice', async (t) => {
  // pending (the answer to the send never reached this service's commit): sent, then paid.
  const pending = await pendingPayout(m, 'lost@example.com');
  const lostLedger = newId('po');
  t.equal(await report(m.id, pending.id, lostLedger, 'paid'), 'ok');
  const paid = await get(m, pending.id);
  t.match(paid, { status: 'paid', method: 'platform', reference: lostLedger });
  t.ok(paid.sent_at, 'sent on the way');
  t.equal(await commissionStatus(pending), 'paid');

  // sending: sent, then paid.
  const sending = await pendingPayout(m, 'sending@example.com');
  await platform.sql`
    update payouts set status = 'sending', method = 'platform', send_attempted_at = now(), send_deadline = now(),
      send_destination_last4 = '6789'
    where id = ${sending.id}`;
  const sendingLedger = newId('po');
  t.equal(await report(m.id, sending.id, sendingLedger, 'paid'), 'ok');
  t.match(await get(m, sending.id), { status: 'paid', reference: sendingLedger });

  // sent: failed, its commission approved again and released.
  const sentLedger = (await get(m, byPass.id)).reference!;
  t.equal(await report(m.id, byPass.id, sentLedger, 'failed'), 'ok');
  t.match(await get(m, byPass.id), { status: 'failed', reference: sentLedger });
  t.equal(await commissionStatus(byPass), 'approved');
  // sent: paid.
  const reportLedger = (await get(m, byReport.id)).reference!;
  t.equal(await report(m.id, byReport.id, reportLedger, 'paid'), 'ok');
  t.equal((await get(m, byReport.id)).status, 'paid');

  // Already so: acknowledged, nothing changes, nothing is counted.
  const before = await mismatches();
  t.equal(await report(m.id, byReport.id, reportLedger, 'paid'), 'ok');
  t.equal(await report(m.id, byPass.id, sentLedger, 'failed'), 'ok');
  t.equal(await mismatches(), before, 'no mismatch');
  t.equal((await get(m, byPass.id)).status, 'failed');
});

t.test('a payout that disagrees with its ledger payout: acknowledged, left as it is, logged, counted', async (t) => {
  const canceled = await pendingPayout(m, 'canceled@example.com');
  t.equal((await m.client.patch(`/api/v1/payouts/${canceled.id}`, { status: 'canceled' })).status, 200);
  const before = await mismatches();
  const cases: [string, string, 'paid' | 'failed', string][] = [
    [canceled.id, newId('po'), 'paid', 'canceled'],
    [byReport.id, (await get(m, byReport.id)).reference!, 'failed', 'paid'],
    [byPass.id, (await get(m, byPass.id)).reference!, 'paid', 'failed'],
    [byRetry.id, newId('po'), 'paid', 'sent'],
    [newId('po'), newId('po'), 'paid', ''],
  ];
  for (const [payoutId, ledgerId, status, stays] of cases) {
    t.equal(await report(m.id, payoutId, ledgerId, status), 'ok', `${stays || 'unknown'} payout reported ${status}`);
    if (stays) t.equal((await get(m, payoutId)).status, stays, `stays ${stays}`);
  }
  t.equal(await mismatches(), before + cases.length, 'each counted in platform_payout_mismatches_total');
  const lines = logs.filter((l) => l.includes('a platform payout disagrees with its ledger payout'));
  t.equal(lines.length, cases.length);
  t.ok(
    lines.every((l) => JSON.parse(l).level === 'error'),
    'at error level',
  );
  t.equal(await commissionStatus(canceled), 'approved', "the canceled payout's commission is not paid");
});
