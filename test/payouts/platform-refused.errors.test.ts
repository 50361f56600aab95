import t from 'tap';
import { followLedger } from '@platform/commissions/platform-ledger';
import { newId } from '@platform/shared/ids';
import {
  affiliate,
  approvedCommissions,
  payoutMerchant,
  refundOrders,
  startPayoutsPlatform,
  voidedEvents,
} from '../helpers/payouts.ts';
import { attachPayments, fundedAccount } from '../payments/setup.ts';
import { putPayoutDetails } from '../tax-forms/setup.ts';

/**
 * A platform send the payment service refuses settles the voids recorded while the payout was sending (they are
 * voided, not paid by it or by a later run), and a payout in a CSV export is never sent through the platform: the
 * export and the platform would both pay it.
 */
t.setTimeout(120_000);

const { platform, service } = await startPayoutsPlatform(t);
const stack = await attachPayments(t, platform, { paymentsEnv: { PAYOUT_RAIL_STEP_MS: '3600000' } });

const refund = (merchantId: string, commissionIds: string[]) => refundOrders(platform, merchantId, commissionIds);

t.test('refused while a refund was recorded: the refunded commission is voided, never paid', async (t) => {
  // No connected account: the payment service refuses the send for good.
  const m = await payoutMerchant(platform, ['tax_form_policy=none', 'min_payout="1"']);
  const ana = await affiliate(m, 'ana@example.com');
  await putPayoutDetails(m.client, ana.id, {
    method: 'bank',
    routing_number: '011000015',
    account_number: '000123456789',
  });
  const [refunded, kept] = await approvedCommissions(platform, service, m.id, ana.id, [
    { amount: '600.00' },
    { amount: '400.00' },
  ]);
  const [payout] = (await m.client.post('/api/v1/payouts')).body.data;
  // A request to the payment service claimed it, whose answer was lost long ago.
  await platform.sql`
    update payouts set status = 'sending', method = 'platform', send_attempted_at = now(),
      send_deadline = now() - interval '10 seconds', send_destination_last4 = '6789'
    where id = ${payout.id}`;

  await refund(m.id, [refunded!]);
  t.match((await m.client.get(`/api/v1/commissions/${refunded}`)).body, {
    status: 'approved',
    void_requested_at: String,
  });

  const sent = await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'sent', method: 'platform' });
  t.equal(sent.status, 409, sent.text);
  t.match(sent.body.error.message, /no connected account/);
  t.match((await m.client.get(`/api/v1/payouts/${payout.id}`)).body, { status: 'pending', method: null, amount: 40 });
  t.match((await m.client.get(`/api/v1/commissions/${refunded}`)).body, { status: 'voided', void_reason: 'refund' });
  t.match(await voidedEvents(platform, m.id, refunded!), [{ status: 'voided', commission_id: refunded }]);
  const again = await m.client.patch(`/api/v1/commissions/${refunded}`, { status: 'voided' });
  t.equal(again.body.status, 'voided', 'the explicit void finds it voided');

  t.equal((await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'canceled' })).status, 200);
  const [next] = (await m.client.post('/api/v1/payouts')).body.data;
  t.match(next, { amount: 40, commission_ids: [kept] }, 'the next run pays the kept one only');
});

t.test('a recorded void in a payout canceled for its deductions is voided, not released', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none', 'min_payout="1"']);
  const ana = await affiliate(m, 'ana@example.com');
  const [paid] = await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '300.00' }]);
  const [first] = (await m.client.post('/api/v1/payouts')).body.data;
  await m.client.patch(`/api/v1/payouts/${first.id}`, { status: 'sent' });
  await m.client.patch(`/api/v1/payouts/${first.id}`, { status: 'paid' });
  await refund(m.id, [paid!]);
  const [big, recorded] = await approvedCommissions(platform, service, m.id, ana.id, [
    { amount: '500.00' },
    { amount: '200.00' },
  ]);
  const [next] = (await m.client.post('/api/v1/payouts')).body.data;
  t.match(next, { amount: 40, adjustments: [{ commission_id: paid, amount: -30 }] });
  // A void recorded while it was frozen, left in it as a refused send left them before (data written by that code).
  await platform.sql`update commissions set void_requested_at = now(), void_requested_reason = 'refund' where id = ${recorded!}`;

  t.equal((await m.client.patch(`/api/v1/commissions/${big}`, { status: 'voided' })).status, 200);
  t.match((await m.client.get(`/api/v1/payouts/${next.id}`)).body, { status: 'canceled', amount: 0 });
  t.match((await m.client.get(`/api/v1/commissions/${recorded}`)).body, { status: 'voided', void_reason: 'refund' });
  t.match(await voidedEvents(platform, m.id, recorded!), [{ status: 'voided', commission_id: recorded }]);
});

t.test('a run never pays a commission with a recorded void', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none', 'min_payout="1"']);
  const ana = await affiliate(m, 'ana@example.com');
  const [recorded, kept] = await approvedCommissions(platform, service, m.id, ana.id, [
    { amount: '600.00' },
    { amount: '400.00' },
  ]);
  await platform.sql`update commissions set void_requested_at = now(), void_requested_reason = 'refund' where id = ${recorded!}`;
  const [payout] = (await m.client.post('/api/v1/payouts')).body.data;
  t.match(payout, { amount: 40, commission_ids: [kept] });
});

t.test('only pending payouts are exported; an exported payout is not sent through the platform', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none', 'min_payout="1"']);
  await fundedAccount(stack, 100_000, {}, { merchant_id: m.id });
  const ana = await affiliate(m, 'ana@example.com');
  await putPayoutDetails(m.client, ana.id, { method: 'bank', iban: 'DE89370400440532013000' });
  await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '600.00' }]);
  const [payout] = (await m.client.post('/api/v1/payouts')).body.data;

  for (const status of ['sending', 'sent', 'paid']) {
    const res = await m.client.get(`/api/v1/payouts/export?layout=bank&status=${status}`);
    t.equal(res.status, 400, `status=${status} is refused`);
    t.match(res.body.error, { code: 'INVALID_INPUT' });
  }
  const file = await m.client.get('/api/v1/payouts/export?layout=bank');
  t.equal(file.status, 200);
  t.match(file.text, payout.id);

  const sent = await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'sent', method: 'platform' });
  t.equal(sent.status, 409, sent.text);
  t.equal(sent.body.error.message, 'The payout was exported; mark it sent by hand (method manual)');
  t.match((await m.client.get(`/api/v1/payouts/${payout.id}`)).body, { status: 'pending', method: null });
  const [moved] = await platform.sql<{ n: number }[]>`
    select count(*)::int as n from payment_payouts where affiliate_payout_id = ${payout.id}`;
  t.equal(moved!.n, 0, 'no money moved');
  const manual = await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'sent', reference: 'BANK-1' });
  t.equal(manual.status, 200, 'sent by hand');
});

async function mismatches(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${service.opsPort}/metrics`)).text();
  return Number(/^platform_payout_mismatches_total\{service="commissions"\} (\S+)$/m.exec(text)![1]);
}

t.test('a ledger payout that moved another amount is a mismatch, never followed', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none', 'min_payout="1"']);
  await fundedAccount(stack, 100_000, {}, { merchant_id: m.id });
  const ana = await affiliate(m, 'ana@example.com');
  await putPayoutDetails(m.client, ana.id, { method: 'bank', iban: 'DE89370400440532013000' });
  await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '600.00' }]);
  const [payout] = (await m.client.post('/api/v1/payouts')).body.data;
  const sent = await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'sent', method: 'platform' });
  t.equal(sent.status, 200, sent.text);

  // The payout as if its send had been claimed again with another amount (the ledger payout moved 60.00).
  await platform.sql`
    update payouts set status = 'sending', reference = null, sent_at = null, amount = 50,
      send_attempted_at = now(), send_deadline = now() - interval '10 seconds'
    where id = ${payout.id}`;
  const before = await mismatches();
  const again = await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'sent', method: 'platform' });
  t.equal(again.status, 409, again.text);
  t.match(again.body.error.message, /paid by ledger payout po_\w+ with 60\.00 USD, not 50\.0+ USD/);
  t.match((await m.client.get(`/api/v1/payouts/${payout.id}`)).body, { status: 'sending', amount: 50 });
  t.equal(await mismatches(), before + 1, 'counted in platform_payout_mismatches_total');

  // An answer naming another amount than the payout's is not followed either.
  const followed = await platform.sql.begin((tx) =>
    followLedger(
      tx,
      m.id,
      payout.id,
      { id: newId('po'), status: 'made', amount: '60.00', currency: 'USD' },
      new Date(),
    ),
  );
  t.match(followed, {
    changed: false,
    mismatch: /the payout is 50\.0+ USD, but ledger payout po_\w+ \(made\) moved 60\.00 USD/,
  });
  t.equal((await m.client.get(`/api/v1/payouts/${payout.id}`)).body.status, 'sending');
});
