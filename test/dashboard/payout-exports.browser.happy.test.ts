import t from 'tap';
import { awaitProcessed, conversion, recordConversions } from '../helpers/commissions.ts';
import { createDashboardUser, openPage, seriousViolations, signInBrowser } from '../helpers/dashboard.ts';
import { eventually } from '../helpers/platform.ts';
import { affiliate, approvedCommissions, payoutMerchant, startPayoutsPlatform } from '../helpers/payouts.ts';
import { putPayoutDetails } from '../tax-forms/setup.ts';

// The Payouts page in real Chromium: an export made from the dashboard is recorded under the signed-in user and
// listed under Exports; the exported payout says so, and a payout shows the clawback it deducts.
const { platform, service } = await startPayoutsPlatform(t);

t.test('the Exports list shows who exported which payouts; payouts show exports and clawbacks', async (t) => {
  const m = await payoutMerchant(platform, ['tax_form_policy=none', 'min_payout="1"']);
  const email = 'exports@example.com';
  const user = await createDashboardUser(platform.sql, m.id, email);
  const ana = await affiliate(m, 'ana@example.com');
  await putPayoutDetails(m.client, ana.id, { method: 'paypal', paypal_email: 'ana.pay@example.com' });
  const [paid] = await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '300.00' }]);
  const [first] = (await m.client.post('/api/v1/payouts')).body.data;
  // A refund after the payout was paid: the next payout deducts the clawback.
  await m.client.patch(`/api/v1/payouts/${first.id}`, { status: 'sent' });
  await m.client.patch(`/api/v1/payouts/${first.id}`, { status: 'paid' });
  const [paidRow] = await platform.sql<{ order_id: string }[]>`select order_id from commissions where id = ${paid!}`;
  const refund = conversion({ affiliate_id: null, event_type: 'refund', amount: '0', external_id: paidRow!.order_id });
  await recordConversions(platform.sql, m.id, [refund]);
  await awaitProcessed(platform.sql, m.id, [refund.event_id]);
  await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '800.00' }]);
  const [next] = (await m.client.post('/api/v1/payouts')).body.data;
  t.equal(next.amount, 50);

  const { page, consoleErrors } = await openPage(t);
  await signInBrowser(page, platform.baseUrl, email);
  await page.goto(`${platform.baseUrl}/dashboard/payouts`);
  await page.getByRole('heading', { level: 1, name: 'Payouts' }).waitFor();
  const row = page.locator(`tr[data-payout="${next.id}"]`);
  await row.getByText('$50.00').waitFor();
  await row.getByText(`Clawback -$30.00 (commission ${paid})`).waitFor();
  await page.getByText('No payout has been exported yet.').waitFor();

  const downloading = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export pending as CSV' }).click();
  await downloading;
  const exports = page.getByRole('region', { name: 'Exports' });
  await exports.getByText(`Dashboard user ${user!['id'] as string}`).waitFor();
  await row.getByText(/^Exported /).waitFor();
  await eventually(async () => {
    const [e] = (await m.client.get('/api/v1/payout_exports')).body.data;
    return e?.dashboard_user_id === user!['id'] ? e : undefined;
  }, 5000);
  t.match((await m.client.get('/api/v1/payout_exports')).body.data, [
    { dashboard_user_id: user!['id'], api_key_id: null, layout: 'paypal', payout_ids: [next.id] },
  ]);
  t.same(await seriousViolations(page), [], 'axe: the Payouts page with its Exports');

  // The clawed-back commission says so on the Commissions page, with what the next payout took back.
  await page.goto(`${platform.baseUrl}/dashboard/commissions`);
  await page.getByRole('heading', { level: 1, name: 'Commissions' }).waitFor();
  await page.locator(`tr[data-commission="${paid}"]`).getByText('Clawback $30.00, recovered $30.00').waitFor();
  t.same(consoleErrors, [], 'no console errors');
});
