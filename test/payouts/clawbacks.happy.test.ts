import t from 'tap';
import {
  affiliate,
  approvedCommissions,
  payoutMerchant,
  refundOrders,
  startPayoutsPlatform,
  voidedEvents,
} from '../helpers/payouts.ts';
import { putPayoutDetails } from '../tax-forms/setup.ts';

/**
 * Refunds and voids of money already on its way (docs/PAYOUTS.md): recorded while the payout is frozen (sent, or
 * exported while pending), voided when it fails, clawed back from the next payout when it is (or was) paid; voiding
 * inside a pending payout keeps the link as history.
 */

const { platform, service } = await startPayoutsPlatform(t);

const refund = (merchantId: string, commissionIds: string[]) => refundOrders(platform, merchantId, commissionIds);

t.test('a refund while the payout is sent is recorded; the payout fails: voided, never paid later', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none', 'min_payout="1"']);
  const ana = await affiliate(m, 'ana@example.com');
  const [refunded, kept] = await approvedCommissions(platform, service, m.id, ana.id, [
    { amount: '600.00' },
    { amount: '400.00' },
  ]);
  const [payout] = (await m.client.post('/api/v1/payouts')).body.data;
  t.equal((await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'sent' })).status, 200);

  await refund(m.id, [refunded!]);
  const recorded = (await m.client.get(`/api/v1/commissions/${refunded}`)).body;
  t.match(recorded, { status: 'approved', void_requested_at: String, clawback: null }, 'recorded, not dropped');
  t.match((await m.client.get(`/api/v1/payouts/${payout.id}`)).body, { status: 'sent', amount: 100 });
  t.same(await voidedEvents(platform, m.id, refunded!), [], 'no commission.voided while the money is on its way');

  const failed = await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'failed', failure_reason: 'returned' });
  t.equal(failed.status, 200);
  t.match((await m.client.get(`/api/v1/commissions/${refunded}`)).body, { status: 'voided', void_reason: 'refund' });
  t.match(await voidedEvents(platform, m.id, refunded!), [{ status: 'voided', commission_id: refunded }]);
  t.notOk((await voidedEvents(platform, m.id, refunded!))[0]!['clawback'], 'nothing was paid: no clawback');
  t.equal((await m.client.get(`/api/v1/commissions/${kept}`)).body.status, 'approved', 'the other is released');

  const [next] = (await m.client.post('/api/v1/payouts')).body.data;
  t.match(next, { amount: 40, commission_ids: [kept], adjustments: [] }, 'the next run pays the kept one only');
});

t.test('a refund after the payout was paid: voided with a clawback the next payout deducts', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none', 'min_payout="1"']);
  const ana = await affiliate(m, 'ana@example.com');
  const [paid] = await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '600.00' }]);
  const [first] = (await m.client.post('/api/v1/payouts')).body.data;
  await m.client.patch(`/api/v1/payouts/${first.id}`, { status: 'sent' });
  await m.client.patch(`/api/v1/payouts/${first.id}`, { status: 'paid' });

  await refund(m.id, [paid!]);
  t.match((await m.client.get(`/api/v1/commissions/${paid}`)).body, {
    status: 'voided',
    void_reason: 'refund',
    clawback: { payout_id: first.id, amount: 60, recovered: 0 },
  });
  t.match(await voidedEvents(platform, m.id, paid!), [
    { clawback: { payout_id: first.id, amount: 60, currency: 'USD' } },
  ]);
  t.same(
    (await m.client.get(`/api/v1/payouts/${first.id}`)).body.commission_ids,
    [paid],
    'the paid payout keeps its history',
  );

  // 60.00 owed back is more than a 40.00 payout: no payout, the clawback carries on.
  const [small] = await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '400.00' }]);
  t.same((await m.client.post('/api/v1/payouts')).body.data, [], 'a payout never goes below zero');
  const [more] = await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '250.05' }]);
  const [next] = (await m.client.post('/api/v1/payouts')).body.data;
  // 40.00 + 25.00 (25.005, half-even) − 60.00
  t.match(next, {
    amount: 5,
    commission_ids: [small, more].sort(),
    adjustments: [{ type: 'clawback', commission_id: paid, amount: -60 }],
  });
  t.match((await m.client.get(`/api/v1/commissions/${paid}`)).body.clawback, { recovered: 60 });

  // The payout that deducted it fails: the clawback is owed again, and the next run deducts it again.
  await m.client.patch(`/api/v1/payouts/${next.id}`, { status: 'sent' });
  await m.client.patch(`/api/v1/payouts/${next.id}`, { status: 'failed', failure_reason: 'returned' });
  t.match((await m.client.get(`/api/v1/commissions/${paid}`)).body.clawback, { recovered: 0 });
  const [again] = (await m.client.post('/api/v1/payouts')).body.data;
  t.match(again, { amount: 5, adjustments: [{ commission_id: paid, amount: -60 }] });

  await refund(m.id, [paid!]);
  t.equal(
    (await voidedEvents(platform, m.id, paid!)).length,
    1,
    'a second refund of the order claws back nothing more',
  );
});

t.test('a void after the export leaves the payout as the file has it; paid: clawed back', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none', 'min_payout="1"']);
  const ana = await affiliate(m, 'ana@example.com');
  await putPayoutDetails(m.client, ana.id, { method: 'paypal', paypal_email: 'ana.pay@example.com' });
  const [voided, other] = await approvedCommissions(platform, service, m.id, ana.id, [
    { amount: '500.00' },
    { amount: '312.30' },
  ]);
  const [payout] = (await m.client.post('/api/v1/payouts')).body.data;
  const file = await m.client.get('/api/v1/payouts/export');
  t.equal(file.status, 200);
  t.match(file.text, `,81.23,USD,${payout.id},`);
  const exported = (await m.client.get(`/api/v1/payouts/${payout.id}`)).body;
  t.match(exported, { status: 'pending', amount: 81.23, exported_at: String });

  const voiding = await m.client.patch(`/api/v1/commissions/${voided}`, {
    status: 'voided',
    void_reason: 'chargeback',
  });
  t.equal(voiding.status, 200);
  t.match(voiding.body, { status: 'approved', void_requested_at: String, void_reason: null });
  const again = await m.client.patch(`/api/v1/commissions/${voided}`, { status: 'voided' });
  t.same(again.body, voiding.body, 'a retried void changes nothing');
  t.match(
    (await m.client.get(`/api/v1/payouts/${payout.id}`)).body,
    { amount: 81.23, commission_ids: [voided, other].sort() },
    'the frozen payout keeps its amount and commissions',
  );

  const exports = (await m.client.get('/api/v1/payout_exports')).body;
  t.match(exports.data, [{ api_key_id: m.keyId, dashboard_user_id: null, layout: 'paypal', payout_ids: [payout.id] }]);

  await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'sent' });
  await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'paid' });
  t.match((await m.client.get(`/api/v1/commissions/${voided}`)).body, {
    status: 'voided',
    void_reason: 'chargeback',
    clawback: { payout_id: payout.id, amount: 50 },
  });
  t.equal((await m.client.get(`/api/v1/commissions/${other}`)).body.status, 'paid');
});

t.test('canceling an exported payout voids the commissions whose void was recorded', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none', 'min_payout="1"']);
  const ana = await affiliate(m, 'ana@example.com');
  await putPayoutDetails(m.client, ana.id, { method: 'bank', iban: 'DE89370400440532013000' });
  const [refunded, kept] = await approvedCommissions(platform, service, m.id, ana.id, [
    { amount: '500.00' },
    { amount: '300.00' },
  ]);
  const [payout] = (await m.client.post('/api/v1/payouts')).body.data;
  t.equal((await m.client.get('/api/v1/payouts/export?layout=bank')).status, 200);
  await refund(m.id, [refunded!]);
  t.match((await m.client.get(`/api/v1/payouts/${payout.id}`)).body, { status: 'pending', amount: 80 });
  await m.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'canceled' });
  t.match((await m.client.get(`/api/v1/commissions/${refunded}`)).body, { status: 'voided', void_reason: 'refund' });
  t.equal((await m.client.get(`/api/v1/commissions/${kept}`)).body.status, 'approved');
  t.same((await m.client.post('/api/v1/payouts')).body.data[0].commission_ids, [kept]);
});

t.test('voiding inside a pending payout keeps the link as its history', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none']);
  const ana = await affiliate(m, 'ana@example.com');
  const ids = await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '500.00' }, { amount: '312.30' }]);
  const [payout] = (await m.client.post('/api/v1/payouts')).body.data;
  await m.client.patch(`/api/v1/commissions/${ids[0]}`, { status: 'voided' });
  t.match((await m.client.get(`/api/v1/payouts/${payout.id}`)).body, {
    status: 'pending',
    amount: 31.23,
    commission_ids: [...ids].sort(),
  });
  const links = await platform.sql<{ commission_id: string; released: boolean }[]>`
    select commission_id, released_at is not null as released from payout_commissions
    where payout_id = ${payout.id} order by commission_id`;
  t.same(
    links,
    [...ids].sort().map((id) => ({ commission_id: id, released: id === ids[0] })),
    'the link rows stay; the voided one is released',
  );
});

t.test('a void that leaves a payout nothing past its deductions cancels it; the clawback is owed again', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none', 'min_payout="1"']);
  const ana = await affiliate(m, 'ana@example.com');
  const [paid] = await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '300.00' }]);
  const [first] = (await m.client.post('/api/v1/payouts')).body.data;
  await m.client.patch(`/api/v1/payouts/${first.id}`, { status: 'sent' });
  await m.client.patch(`/api/v1/payouts/${first.id}`, { status: 'paid' });
  await refund(m.id, [paid!]);
  const [big, small] = await approvedCommissions(platform, service, m.id, ana.id, [
    { amount: '500.00' },
    { amount: '200.00' },
  ]);
  const [next] = (await m.client.post('/api/v1/payouts')).body.data;
  t.match(next, { amount: 40, adjustments: [{ commission_id: paid, amount: -30 }] });

  // 20.00 left against 30.00 owed: the deduction is cut to 20.00, nothing would be paid, so the payout is canceled.
  t.equal((await m.client.patch(`/api/v1/commissions/${big}`, { status: 'voided' })).status, 200);
  t.match((await m.client.get(`/api/v1/payouts/${next.id}`)).body, { status: 'canceled', amount: 0 });
  t.match((await m.client.get(`/api/v1/commissions/${paid}`)).body.clawback, { amount: 30, recovered: 0 });
  t.equal((await m.client.get(`/api/v1/commissions/${small}`)).body.status, 'approved', 'released');
  t.same((await m.client.post('/api/v1/payouts')).body.data, [], 'still less than what is owed: no payout');
});

t.test('payout runs racing each other deduct an open clawback once', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none', 'min_payout="1"']);
  const ana = await affiliate(m, 'ana@example.com');
  const [paid] = await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '600.00' }]);
  const [first] = (await m.client.post('/api/v1/payouts')).body.data;
  await m.client.patch(`/api/v1/payouts/${first.id}`, { status: 'sent' });
  await m.client.patch(`/api/v1/payouts/${first.id}`, { status: 'paid' });
  await refund(m.id, [paid!]);
  await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '1000.00' }]);

  const runs = await Promise.all(Array.from({ length: 6 }, () => m.client.post('/api/v1/payouts')));
  t.same(
    runs.map((r) => r.status),
    Array(6).fill(201),
    'every run answers',
  );
  const made = runs.flatMap((r) => r.body.data as { id: string; amount: number; adjustments: unknown[] }[]);
  t.equal(made.length, 1, 'one payout for the affiliate, whichever run made it');
  t.match(made[0], { amount: 40, adjustments: [{ type: 'clawback', commission_id: paid, amount: -60 }] });
  t.match((await m.client.get(`/api/v1/commissions/${paid}`)).body.clawback, { amount: 60, recovered: 60 });
});
