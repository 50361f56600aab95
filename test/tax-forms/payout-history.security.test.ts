import t from 'tap';
import { createAffiliate } from '../events/setup.ts';
import { dashboardMerchant, sessionRequest, signInHttp } from '../helpers/dashboard.ts';
import { startPlatform } from '../helpers/platform.ts';
import { payoutHistoryPath, putPayoutDetails } from './setup.ts';

// The payout details history is the merchant's own, holds nothing but masked values, and records only changes made.

const platform = await startPlatform(t);
const owner = await dashboardMerchant(platform);
const stranger = await dashboardMerchant(platform);
const affiliate = await createAffiliate(owner.client, 'private@example.com');
const account = '000987654321';
t.equal(
  (
    await putPayoutDetails(owner.client, affiliate.id, {
      method: 'bank',
      routing_number: '011000015',
      account_number: account,
    })
  ).status,
  200,
);

t.test("another merchant's key and dashboard session get 404, the owner's key the history", async (t) => {
  const byKey = await stranger.client.get(payoutHistoryPath(affiliate.id));
  t.equal(byKey.status, 404);
  t.match(byKey.body, { error: { code: 'NOT_FOUND', message: 'No such affiliate' } });
  const session = await signInHttp(platform.baseUrl, stranger.email);
  const bySession = await sessionRequest(platform.baseUrl, session, 'GET', payoutHistoryPath(affiliate.id));
  t.equal(bySession.status, 404);
  t.notMatch(bySession.text, /6789|4321|0015/, 'nothing of the details');

  const reader = await platform.merchant({ scopes: 'read' });
  t.equal((await reader.client.get(payoutHistoryPath(affiliate.id))).status, 404, 'a read key of another merchant');
  t.equal((await owner.client.get(payoutHistoryPath(affiliate.id))).status, 200, "the owner's key");
});

t.test('the history holds masked values only: no vault id, no ciphertext, no digits past the last four', async (t) => {
  const res = await owner.client.get(payoutHistoryPath(affiliate.id));
  t.equal(res.body.data.length, 1);
  t.notMatch(res.text, account, 'the account number');
  t.notMatch(res.text, /vlt_|v1:|v2:/, 'no vault reference or ciphertext');
  const [row] = await platform.sql<{ merchant_id: string; masked_after: unknown }[]>`
    select merchant_id, masked_after from payout_details_changes where affiliate_id = ${affiliate.id}`;
  t.equal(row!.merchant_id, owner.id, 'kept under the merchant');
  t.notMatch(JSON.stringify(row!.masked_after), account, 'masked in the table too');
});

t.test('a refused change, or one for another merchant, writes no history', async (t) => {
  const refused = await putPayoutDetails(owner.client, affiliate.id, { method: 'bank', iban: 'DE00 0000' });
  t.equal(refused.status, 400);
  const foreign = await putPayoutDetails(stranger.client, affiliate.id, { method: 'paypal', paypal_email: 'x@y.com' });
  t.equal(foreign.status, 404);
  const [count] = await platform.sql<{ n: number }[]>`
    select count(*)::int as n from payout_details_changes where affiliate_id = ${affiliate.id}`;
  t.equal(count!.n, 1, 'only the change made');
});
