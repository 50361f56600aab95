import t from 'tap';
import { expectError } from '../helpers/errors.ts';
import { affiliate, approvedCommissions, payoutMerchant, startPayoutsPlatform } from '../helpers/payouts.ts';
import { taxFormsPath, w8ben, w9 } from '../tax-forms/setup.ts';

/**
 * tax_form_policy: under us_threshold (the default) an affiliate without a valid form is paid until the year's
 * payouts reach 600, then the payout is created pending with held_reason tax_form_required and cannot be sent; a
 * valid W-9 through the API releases it. `required` holds every payout until a form is on file; `none` never holds.
 */

const { platform, service } = await startPayoutsPlatform(t);

const HELD_MESSAGE =
  'The payout is held (tax_form_required): it can be sent once the affiliate has a valid tax form on file';

t.test('us_threshold: held at the 600 mark, released when a W-9 arrives', async (t) => {
  const m = await payoutMerchant(platform);
  const ana = await affiliate(m, 'ana@example.com');
  await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '3000.00' }]);
  const [first] = (await m.client.post('/api/v1/payouts')).body.data;
  t.match(first, { amount: 300, held_reason: null }, '300 in the year: not held');
  t.equal((await m.client.patch(`/api/v1/payouts/${first.id}`, { status: 'sent' })).status, 200);
  t.equal((await m.client.patch(`/api/v1/payouts/${first.id}`, { status: 'paid' })).status, 200);

  await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '2999.90' }]);
  const [second] = (await m.client.post('/api/v1/payouts')).body.data;
  t.match(second, { amount: 299.99, status: 'pending', held_reason: null }, '599.99 in the year: not held');
  await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '0.10' }]);
  // min_payout 50 leaves 0.01 alone: a larger commission reaches the mark.
  await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '500.00' }]);
  const [third] = (await m.client.post('/api/v1/payouts')).body.data;
  t.match(third, { amount: 50.01, status: 'pending', held_reason: 'tax_form_required' }, '599.99 + 50.01 reaches 600');

  expectError(
    t,
    await m.client.patch(`/api/v1/payouts/${third.id}`, { status: 'sent' }),
    409,
    'CONFLICT',
    HELD_MESSAGE,
  );
  const listed = await m.client.get('/api/v1/payouts?status=pending');
  t.same(
    new Map(listed.body.data.map((p: any) => [p.id, p.held_reason])),
    new Map([
      [third.id, 'tax_form_required'],
      [second.id, null],
    ]),
    'the list shows the hold and its reason',
  );

  const form = await m.client.post(taxFormsPath(ana.id), w9('123-45-6789'));
  t.equal(form.status, 201);
  const released = await m.client.get(`/api/v1/payouts/${third.id}`);
  t.equal(released.body.held_reason, null, 'the W-9 released the hold');
  const sent = await m.client.patch(`/api/v1/payouts/${third.id}`, { status: 'sent', reference: 'WIRE-1' });
  t.equal(sent.status, 200);
  t.match(sent.body, { status: 'sent', held_reason: null });

  await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '9000.00' }]);
  const [fourth] = (await m.client.post('/api/v1/payouts')).body.data;
  t.equal(fourth.held_reason, null, 'with a form on file nothing is held');
});

t.test('required: held whenever no valid form is on file; none: never held', async (t) => {
  const strict = await payoutMerchant(platform, ['tax_form_policy=required']);
  const hans = await affiliate(strict, 'hans@example.de');
  await approvedCommissions(platform, service, strict.id, hans.id, [{ amount: '500.00', currency: 'EUR' }]);
  const [held] = (await strict.client.post('/api/v1/payouts')).body.data;
  t.match(held, { amount: 50, currency: 'EUR', held_reason: 'tax_form_required' });
  expectError(
    t,
    await strict.client.patch(`/api/v1/payouts/${held.id}`, { status: 'sent' }),
    409,
    'CONFLICT',
    HELD_MESSAGE,
  );
  t.equal((await strict.client.post(taxFormsPath(hans.id), w8ben())).status, 201);
  t.equal((await strict.client.get(`/api/v1/payouts/${held.id}`)).body.held_reason, null, 'a W-8BEN releases it too');

  const lax = await payoutMerchant(platform, ['tax_form_policy=none']);
  const bo = await affiliate(lax, 'bo@example.com');
  await approvedCommissions(platform, service, lax.id, bo.id, [{ amount: '90000.00' }]);
  const [free] = (await lax.client.post('/api/v1/payouts')).body.data;
  t.match(free, { amount: 9000, held_reason: null });
});

t.test('a held payout can be canceled; its commissions wait for the next payout', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=required']);
  const ana = await affiliate(m, 'ana@example.com');
  const ids = await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '700.00' }]);
  const [held] = (await m.client.post('/api/v1/payouts')).body.data;
  const canceled = await m.client.patch(`/api/v1/payouts/${held.id}`, { status: 'canceled' });
  t.match(canceled.body, { status: 'canceled', held_reason: null, commission_ids: ids });
});
