import { parse } from 'csv-parse/sync';
import t from 'tap';
import { affiliate, approvedCommissions, payoutMerchant, startPayoutsPlatform } from '../helpers/payouts.ts';
import { putPayoutDetails } from '../tax-forms/setup.ts';

/**
 * GET /api/v1/payouts/export answers text/csv: the PayPal Payouts batch layout (no header: e-mail, amount, currency,
 * customer id, note, wallet) and the bank layout (a header row). Parsed with csv-parse and compared with the
 * payouts the API lists.
 */

const { platform, service } = await startPayoutsPlatform(t);
const m = await payoutMerchant(platform, ['tax_form_policy=none']);
const ana = await affiliate(m, 'ana@example.com');
const ben = await affiliate(m, 'ben@example.com');
const cy = await affiliate(m, 'cy@example.com');
const dee = await affiliate(m, 'dee@example.com');
const details = async (affiliateId: string, body: Record<string, string>) => {
  const res = await putPayoutDetails(m.client, affiliateId, body);
  if (res.status !== 200) throw new Error(`payout details answered ${res.status}: ${res.text}`);
};
await details(ana.id, { method: 'paypal', paypal_email: 'ana.pay@example.com' });
await details(ben.id, { method: 'paypal', paypal_email: 'ben+pp@example.org' });
await details(cy.id, { method: 'bank', iban: 'DE89370400440532013000' });
await details(dee.id, { method: 'bank', routing_number: '011000015', account_number: '123456789' });
await approvedCommissions(platform, service, m.id, ana.id, [
  { amount: '1825.00' },
  { amount: '700.00', currency: 'EUR' },
]);
await approvedCommissions(platform, service, m.id, ben.id, [{ amount: '999.99' }]);
await approvedCommissions(platform, service, m.id, cy.id, [{ amount: '600.00', currency: 'EUR' }]);
await approvedCommissions(platform, service, m.id, dee.id, [{ amount: '751.00' }]);
const created = (await m.client.post('/api/v1/payouts')).body.data as any[];

const pending = async () => (await m.client.get('/api/v1/payouts?status=pending&limit=100')).body.data as any[];
const money = (p: any) => p.amount.toFixed(2);

t.test('PayPal layout: one row per pending payout of a PayPal payee, matching the payouts', async (t) => {
  t.equal(created.length, 5);
  const res = await m.client.get('/api/v1/payouts/export?status=pending');
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
  const rows = parse(res.text);
  const emails = new Map([
    [ana.id, 'ana.pay@example.com'],
    [ben.id, 'ben+pp@example.org'],
  ]);
  const expected = (await pending())
    .filter((p) => emails.has(p.affiliate_id))
    .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
    .map((p) => [
      emails.get(p.affiliate_id),
      money(p),
      p.currency,
      p.id,
      `Commissions ${p.period_start.slice(0, 10)} to ${p.period_end.slice(0, 10)}`,
      'PAYPAL',
    ]);
  t.equal(expected.length, 3);
  t.same(rows, expected);
  t.ok(
    rows.every((r) => r[3]!.length <= 30),
    'customer ids fit PayPal’s 30 characters',
  );

  const usd = parse((await m.client.get('/api/v1/payouts/export?currency=USD')).text);
  t.same(
    usd.map((r) => r[2]),
    ['USD', 'USD'],
    'one currency per file when asked',
  );
});

t.test('bank layout: a header, then IBAN or routing and account number per bank payee', async (t) => {
  const res = await m.client.get('/api/v1/payouts/export?layout=bank');
  t.equal(res.status, 200);
  const records = parse<Record<string, string>>(res.text, { columns: true });
  const byAffiliate = new Map((await pending()).map((p) => [p.affiliate_id, p]));
  const cyPayout = byAffiliate.get(cy.id);
  const deePayout = byAffiliate.get(dee.id);
  t.same(
    records,
    [
      {
        payout_id: cyPayout.id,
        affiliate_id: cy.id,
        account_holder: 'Cy',
        iban: 'DE89370400440532013000',
        routing_number: '',
        account_number: '',
        amount: '60.00',
        currency: 'EUR',
        reference: cyPayout.id,
      },
      {
        payout_id: deePayout.id,
        affiliate_id: dee.id,
        account_holder: 'Dee',
        iban: '',
        routing_number: '011000015',
        account_number: '123456789',
        amount: '75.10',
        currency: 'USD',
        reference: deePayout.id,
      },
    ].sort((a, b) => a.payout_id.localeCompare(b.payout_id)) as any,
  );
});

t.test('payouts that moved on leave the pending export; held payouts are never exported', async (t) => {
  const anaUsd = created.find((p) => p.affiliate_id === ana.id && p.currency === 'USD');
  await m.client.patch(`/api/v1/payouts/${anaUsd.id}`, { status: 'sent', reference: 'BATCH-1' });
  const pendingRows = parse((await m.client.get('/api/v1/payouts/export')).text);
  t.notOk(pendingRows.some((r) => r[3] === anaUsd.id));
  const sent = await m.client.get('/api/v1/payouts/export?status=sent');
  t.equal(sent.status, 400, 'only pending payouts are exported');

  const strict = await payoutMerchant(platform, ['tax_form_policy=required']);
  const eve = await affiliate(strict, 'eve@example.com');
  await putPayoutDetails(strict.client, eve.id, { method: 'paypal', paypal_email: 'eve@example.com' });
  await approvedCommissions(platform, service, strict.id, eve.id, [{ amount: '900.00' }]);
  const [held] = (await strict.client.post('/api/v1/payouts')).body.data;
  t.equal(held.held_reason, 'tax_form_required');
  t.equal((await strict.client.get('/api/v1/payouts/export')).text, '', 'an empty file');
});

t.test('the OpenAPI document lists the export as text/csv', async (t) => {
  const doc = (await m.client.get('/api/v1/openapi')).body;
  const ok = doc.paths['/api/v1/payouts/export'].get.responses['200'];
  t.same(Object.keys(ok.content), ['text/csv']);
  t.equal(ok.content['text/csv'].schema.type, 'string');
  t.same(
    Object.keys(doc.paths['/api/v1/payouts/{payout_id}'].get.responses['200'].content),
    ['application/json'],
    'the other payout operations answer JSON',
  );
});
