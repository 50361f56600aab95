import t from 'tap';
import { expectError, expectInvalid } from '../helpers/errors.ts';
import { affiliate, approvedCommissions, payoutMerchant, startPayoutsPlatform } from '../helpers/payouts.ts';
import { putPayoutDetails } from '../tax-forms/setup.ts';

/**
 * Tenancy and scopes: another merchant gets 404 on every payout route that names a payout, sees none in its list or
 * export, and cannot name this merchant's affiliates; keys need the right scope; payout details appear in the CSV
 * only, never in a log line.
 */

const { platform, service, logs } = await startPayoutsPlatform(t);
const owner = await payoutMerchant(platform, ['tax_form_policy=none']);
const other = await payoutMerchant(platform, ['tax_form_policy=none']);
const ana = await affiliate(owner, 'ana@example.com');
await putPayoutDetails(owner.client, ana.id, { method: 'paypal', paypal_email: 'ana.secret@example.com' });
await approvedCommissions(platform, service, owner.id, ana.id, [{ amount: '900.00' }]);
const [payout] = (await owner.client.post('/api/v1/payouts')).body.data;
const path = `/api/v1/payouts/${payout.id}`;

t.test('another merchant gets 404 on every route that names the payout, and sees none of it', async (t) => {
  expectError(t, await other.client.get(path), 404, 'NOT_FOUND', 'No such payout');
  for (const body of [
    { status: 'sent' },
    { status: 'canceled' },
    { status: 'paid' },
    { status: 'failed', failure_reason: 'x' },
  ])
    expectError(t, await other.client.patch(path, body), 404, 'NOT_FOUND', 'No such payout');
  t.same((await other.client.get('/api/v1/payouts')).body, { data: [], next_cursor: null });
  t.same((await other.client.get(`/api/v1/payouts?affiliate_id=${ana.id}`)).body, { data: [], next_cursor: null });
  t.equal((await other.client.get('/api/v1/payouts/export')).text, '');
  const bank = await other.client.get('/api/v1/payouts/export?layout=bank');
  t.equal(bank.text.split('\r\n').filter(Boolean).length, 1, 'the bank file holds its header only');
  expectInvalid(t, await other.client.post('/api/v1/payouts', { affiliate_ids: [ana.id] }), [
    { path: 'affiliate_ids.0', message: 'names no affiliate of this merchant' },
  ]);
  t.same(
    (await other.client.post('/api/v1/payouts')).body,
    { data: [], created_count: 0 },
    "the other merchant's run takes nothing",
  );
  const still = await owner.client.get(path);
  t.match(still.body, { status: 'pending', commission_ids: payout.commission_ids }, 'the payout is untouched');
});

t.test('scopes: creating, moving and exporting need write, reading needs read; no key is 401', async (t) => {
  const readOnly = await platform.merchant({ scopes: 'read' });
  const writeOnly = await platform.merchant({ scopes: 'write' });
  expectError(t, await readOnly.client.post('/api/v1/payouts'), 403, 'FORBIDDEN', 'This key lacks the write scope');
  expectError(
    t,
    await readOnly.client.patch(path, { status: 'sent' }),
    403,
    'FORBIDDEN',
    'This key lacks the write scope',
  );
  expectError(t, await writeOnly.client.get('/api/v1/payouts'), 403, 'FORBIDDEN', 'This key lacks the read scope');
  // The export reads bank details in clear: more than a read key may.
  expectError(
    t,
    await readOnly.client.get('/api/v1/payouts/export'),
    403,
    'FORBIDDEN',
    'This key lacks the write scope',
  );
  const anonymous = platform.client();
  const res = await anonymous.get('/api/v1/payouts/export');
  t.equal(res.status, 401);
  t.equal(res.headers.get('www-authenticate'), 'Bearer realm="api"');
});

t.test('payout details reach the owner’s CSV and no log line', async (t) => {
  const csv = await owner.client.get('/api/v1/payouts/export');
  t.match(csv.text, /^ana\.secret@example\.com,90\.00,USD,po_/);
  const lines = [...logs, ...platform.logs];
  t.ok(
    lines.some((l) => l.includes('payouts exported')),
    'the export was logged',
  );
  t.notOk(
    lines.some((l) => l.includes('ana.secret')),
    'the PayPal e-mail appears in no log line',
  );
  await owner.client.patch(path, { status: 'sent' });
  const rows = await platform.sql<{ data: string }[]>`
    select data::text as data from outbox where merchant_id = ${owner.id} and type like 'payout.%'`;
  t.equal(rows.length, 1, 'payout.sent written');
  t.notOk(
    rows.some((r) => r.data.includes('ana.secret')),
    'nor in the outbox rows of its webhooks',
  );
});
