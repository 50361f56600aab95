import t from 'tap';
import { expectError, expectInvalid } from '../helpers/errors.ts';
import { affiliate, approvedCommissions, payoutMerchant, startPayoutsPlatform } from '../helpers/payouts.ts';

/** Refused requests: wrong moves (409 with the allowed moves), bad fields, filters and ids; never a 500. */

const { platform, service } = await startPayoutsPlatform(t);
const m = await payoutMerchant(platform, ['tax_form_policy=none']);
const ana = await affiliate(m, 'ana@example.com');
await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '900.00' }]);
const [payout] = (await m.client.post('/api/v1/payouts')).body.data;
const path = `/api/v1/payouts/${payout.id}`;

t.test('a wrong move is 409 CONFLICT naming the moves there are', async (t) => {
  expectError(
    t,
    await m.client.patch(path, { status: 'paid' }),
    409,
    'CONFLICT',
    'A pending payout cannot move to paid; allowed moves from pending: sent, canceled',
  );
  expectError(
    t,
    await m.client.patch(path, { status: 'failed', failure_reason: 'bounced' }),
    409,
    'CONFLICT',
    'A pending payout cannot move to failed; allowed moves from pending: sent, canceled',
  );
  // sending is the platform's own step (status sent with method platform), never asked for by hand.
  expectError(
    t,
    await m.client.patch(path, { status: 'sending' }),
    409,
    'CONFLICT',
    'A pending payout cannot move to sending; allowed moves from pending: sent, canceled',
  );
  t.equal((await m.client.patch(path, { status: 'sent' })).status, 200);
  expectError(
    t,
    await m.client.patch(path, { status: 'canceled' }),
    409,
    'CONFLICT',
    'A sent payout cannot move to canceled; allowed moves from sent: paid, failed',
  );
  t.equal((await m.client.patch(path, { status: 'paid' })).status, 200);
  expectError(
    t,
    await m.client.patch(path, { status: 'failed', failure_reason: 'bounced' }),
    409,
    'CONFLICT',
    'A paid payout cannot move to failed; paid is final',
  );
  // Every status of a payout is a move the body may ask for: back to pending, or into sending (the platform's).
  expectError(
    t,
    await m.client.patch(path, { status: 'pending' }),
    409,
    'CONFLICT',
    'A paid payout cannot move to pending; paid is final',
  );
  expectError(
    t,
    await m.client.patch(path, { status: 'sending' }),
    409,
    'CONFLICT',
    'A paid payout cannot move to sending; paid is final',
  );
  const after = await m.client.get(path);
  t.equal(after.body.status, 'paid', 'a refused move changes nothing');
});

t.test("a status that is none of a payout's is 400 INVALID_INPUT, whatever the payout's own", async (t) => {
  expectInvalid(t, await m.client.patch(path, { status: 'settled' }), [
    { path: 'status', message: 'must be one of: "pending", "sending", "sent", "paid", "failed", "canceled"' },
  ]);
});

t.test('move fields: each with its own move, failure_reason required with failed', async (t) => {
  expectInvalid(t, await m.client.patch(path, { status: 'failed' }), [
    { path: 'failure_reason', message: 'is required with status failed' },
  ]);
  expectInvalid(t, await m.client.patch(path, { status: 'paid', reference: 'x' }), [
    { path: 'reference', message: 'is only accepted with status sent' },
  ]);
  expectInvalid(t, await m.client.patch(path, { status: 'canceled', method: 'manual' }), [
    { path: 'method', message: 'is only accepted with status sent' },
  ]);
  expectInvalid(t, await m.client.patch(path, { status: 'sent', failure_reason: 'x' }), [
    { path: 'failure_reason', message: 'is only accepted with status failed' },
  ]);
  const badStatus = await m.client.patch(path, { status: 'approved' });
  t.equal(badStatus.status, 400);
  t.equal(badStatus.body.error.details[0].path, 'status');
  const badMethod = await m.client.patch(path, { status: 'sent', method: 'wire' });
  t.equal(badMethod.status, 400);
  t.equal(badMethod.body.error.details[0].path, 'method');
  expectInvalid(t, await m.client.patch(path, { status: 'sent', amount: 5 }), [
    { path: 'amount', message: 'is not a known field' },
  ]);
  expectInvalid(t, await m.client.patch(path, { status: 'sent', reference: '' }), [
    { path: 'reference', message: 'must NOT have fewer than 1 characters' },
  ]);
});

t.test('lists and export: bad filters, limits and cursors', async (t) => {
  expectInvalid(t, await m.client.get('/api/v1/payouts?limit=0'), [{ path: 'limit', message: 'must be >= 1' }]);
  const status = await m.client.get('/api/v1/payouts?status=approved');
  t.equal(status.status, 400);
  t.equal(status.body.error.details[0].path, 'status');
  expectInvalid(t, await m.client.get('/api/v1/payouts?affiliate_id=nope'), [
    { path: 'affiliate_id', message: 'must match pattern "^aff_[0-9a-hjkmnp-tv-z]{26}$"' },
  ]);
  expectInvalid(t, await m.client.get('/api/v1/payouts?cursor=forged.cursor'), [
    { path: 'cursor', message: 'is not a cursor issued for this list' },
  ]);
  expectInvalid(t, await m.client.get('/api/v1/payouts?sort=amount'), [
    { path: 'sort', message: 'is not a known field' },
  ]);
  const layout = await m.client.get('/api/v1/payouts/export?layout=xml');
  t.equal(layout.status, 400);
  t.equal(layout.body.error.details[0].path, 'layout');
  expectInvalid(t, await m.client.get('/api/v1/payouts/export?currency=usd'), [
    { path: 'currency', message: 'must match pattern "^[A-Z]{3}$"' },
  ]);
});

t.test('create: affiliate_ids must name affiliates of the merchant', async (t) => {
  expectInvalid(t, await m.client.post('/api/v1/payouts', { affiliate_ids: [] }), [
    { path: 'affiliate_ids', message: 'must NOT have fewer than 1 items' },
  ]);
  expectInvalid(
    t,
    await m.client.post('/api/v1/payouts', { affiliate_ids: [ana.id, 'aff_01jd3t6m0s2e4w5x6y7z8a9b0c'] }),
    [{ path: 'affiliate_ids.1', message: 'names no affiliate of this merchant' }],
  );
  const dup = await m.client.post('/api/v1/payouts', { affiliate_ids: [ana.id, ana.id] });
  t.equal(dup.status, 400);
  t.equal(dup.body.error.details[0].path, 'affiliate_ids');
  expectInvalid(t, await m.client.post('/api/v1/payouts', { all: true }), [
    { path: 'all', message: 'is not a known field' },
  ]);
});

t.test('unknown and malformed payout ids are 404', async (t) => {
  expectError(
    t,
    await m.client.get('/api/v1/payouts/po_01jd3t6m0s2e4w5x6y7z8a9b0c'),
    404,
    'NOT_FOUND',
    'No such payout',
  );
  expectError(t, await m.client.get('/api/v1/payouts/com_1'), 404, 'NOT_FOUND', 'No such payout');
  expectError(
    t,
    await m.client.patch('/api/v1/payouts/po_01jd3t6m0s2e4w5x6y7z8a9b0c', { status: 'sent' }),
    404,
    'NOT_FOUND',
    'No such payout',
  );
});

t.test('a void of a commission in a sent payout is recorded; the payout fails: voided, never paid', async (t) => {
  const bo = await affiliate(m, 'bo@example.com');
  const [commission] = await approvedCommissions(platform, service, m.id, bo.id, [{ amount: '800.00' }]);
  const [sent] = (await m.client.post('/api/v1/payouts', { affiliate_ids: [bo.id] })).body.data;
  await m.client.patch(`/api/v1/payouts/${sent.id}`, { status: 'sent' });
  const recorded = await m.client.patch(`/api/v1/commissions/${commission}`, { status: 'voided' });
  t.equal(recorded.status, 200);
  t.match(recorded.body, { status: 'approved', void_requested_at: String }, 'recorded while the money is on its way');
  t.match((await m.client.get(`/api/v1/payouts/${sent.id}`)).body, { status: 'sent', amount: 80 });
  await m.client.patch(`/api/v1/payouts/${sent.id}`, { status: 'failed', failure_reason: 'returned' });
  t.match((await m.client.get(`/api/v1/commissions/${commission}`)).body, { status: 'voided', void_reason: 'manual' });
  t.same(
    (await m.client.post('/api/v1/payouts', { affiliate_ids: [bo.id] })).body.data,
    [],
    'a voided commission is never paid',
  );
});
