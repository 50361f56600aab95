import t from 'tap';
import { createKey } from '../../scripts/admin/commands.ts';
import { expectError } from '../helpers/errors.ts';
import { affiliate, approvedCommissions, payoutMerchant, startPayoutsPlatform } from '../helpers/payouts.ts';
import { putPayoutDetails } from '../tax-forms/setup.ts';

/**
 * The export reads bank details in clear: a read key is refused (403 in the contract's envelope) and no payout is
 * frozen; each export is recorded for its merchant only. Another merchant sees none of the exports, recorded voids
 * or clawbacks, and gets 404 on the payout and commissions that carry them.
 */

const { platform, service } = await startPayoutsPlatform(t);
const owner = await payoutMerchant(platform, ['tax_form_policy=none']);
const other = await payoutMerchant(platform, ['tax_form_policy=none']);
const ana = await affiliate(owner, 'ana@example.com');
await putPayoutDetails(owner.client, ana.id, { method: 'paypal', paypal_email: 'ana.secret@example.com' });
const [first, second] = await approvedCommissions(platform, service, owner.id, ana.id, [
  { amount: '600.00' },
  { amount: '400.00' },
]);
const [payout] = (await owner.client.post('/api/v1/payouts')).body.data;

t.test('a read key cannot export: 403 FORBIDDEN, nothing recorded, nothing frozen', async (t) => {
  const reader = platform.client((await createKey(platform.sql, owner.id, 'read')).key);
  const res = await reader.get('/api/v1/payouts/export');
  expectError(t, res, 403, 'FORBIDDEN', 'This key lacks the write scope');
  t.notMatch(res.text, /ana\.secret/);
  t.same((await owner.client.get('/api/v1/payout_exports')).body, { data: [], next_cursor: null });
  t.match((await owner.client.get(`/api/v1/payouts/${payout.id}`)).body, { exported_at: null });
  t.equal((await reader.get('/api/v1/payout_exports')).status, 200, 'reading the record of exports needs read only');
});

t.test('another merchant sees no export and gets 404 on what carries a recorded void or a clawback', async (t) => {
  t.equal((await owner.client.get('/api/v1/payouts/export')).status, 200);
  t.equal((await owner.client.patch(`/api/v1/commissions/${first}`, { status: 'voided' })).status, 200);
  t.same((await other.client.get('/api/v1/payout_exports')).body, { data: [], next_cursor: null });
  t.equal((await other.client.get('/api/v1/payouts/export')).text, '', "the other merchant's file is empty");
  t.equal((await owner.client.get('/api/v1/payout_exports')).body.data.length, 1, "only the owner's export");
  t.match(
    (await other.client.get('/api/v1/payout_exports')).body.data,
    [{ api_key_id: other.keyId, payout_ids: [] }],
    "the other merchant's own (empty) export is recorded as its own",
  );
  expectError(t, await other.client.get(`/api/v1/payouts/${payout.id}`), 404, 'NOT_FOUND', 'No such payout');
  expectError(t, await other.client.get(`/api/v1/commissions/${first}`), 404, 'NOT_FOUND', 'No such commission');
  expectError(
    t,
    await other.client.patch(`/api/v1/commissions/${second}`, { status: 'voided' }),
    404,
    'NOT_FOUND',
    'No such commission',
  );
  t.match(
    (await owner.client.get(`/api/v1/commissions/${second}`)).body,
    { status: 'approved', void_requested_at: null },
    "the other merchant's void recorded nothing",
  );

  await owner.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'sent' });
  await owner.client.patch(`/api/v1/payouts/${payout.id}`, { status: 'paid' });
  t.match((await owner.client.get(`/api/v1/commissions/${first}`)).body, { clawback: { amount: 60 } });
  expectError(t, await other.client.get(`/api/v1/commissions/${first}`), 404, 'NOT_FOUND', 'No such commission');
  const [clawbacks] = await platform.sql<{ n: number }[]>`
    select count(*)::int as n from payout_clawbacks where merchant_id = ${other.id}`;
  t.equal(clawbacks!.n, 0);
  t.same((await other.client.get('/api/v1/commissions?status=voided')).body.data, []);
});
