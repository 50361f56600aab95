import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import t from 'tap';
import { loadEventsConfig } from '@platform/events/config';
import { startEventsService } from '@platform/events/service';
import { createDashboardUser, openPage, seriousViolations, signInBrowser } from '../helpers/dashboard.ts';
import { captureLogger, eventually } from '../helpers/platform.ts';
import { affiliate, approvedCommissions, payoutMerchant, startPayoutsPlatform } from '../helpers/payouts.ts';
import { putPayoutDetails } from '../tax-forms/setup.ts';

// The Payouts page in real Chromium: create, filter, mark sent/paid/failed, held payouts with their reason, CSV export.
const { platform, service } = await startPayoutsPlatform(t);
// The Settings page lists coupons too: the events service answers them.
const events = await startEventsService(loadEventsConfig({ ...platform.env }), captureLogger('events').log);
t.teardown(() => events.close());

t.test('payouts are created, moved and exported from the Payouts page', async (t) => {
  const m = await payoutMerchant(platform);
  const email = 'owner@example.com';
  await createDashboardUser(platform.sql, m.id, email);
  const ana = await affiliate(m, 'ana@example.com');
  const bo = await affiliate(m, 'bo@example.com');
  const cy = await affiliate(m, 'cy@example.com');
  await putPayoutDetails(m.client, ana.id, { method: 'paypal', paypal_email: 'ana.pay@example.com' });
  await approvedCommissions(platform, service, m.id, ana.id, [{ amount: '800.00' }]);
  await approvedCommissions(platform, service, m.id, bo.id, [{ amount: '7000.00' }]);
  await approvedCommissions(platform, service, m.id, cy.id, [{ amount: '900.00' }]);

  const { page, consoleErrors } = await openPage(t);
  await signInBrowser(page, platform.baseUrl, email);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payouts' }).click();
  await page.getByRole('heading', { level: 1, name: 'Payouts' }).waitFor();
  await page.getByText('No payout matches.').waitFor();

  await page.getByRole('button', { name: 'Create payouts' }).click();
  await page.getByText('Created 3 payout(s).').waitFor();
  const payouts = (await m.client.get('/api/v1/payouts')).body.data as any[];
  const of = (id: string) => payouts.find((p) => p.affiliate_id === id);
  const [anaPayout, boPayout, cyPayout] = [of(ana.id), of(bo.id), of(cy.id)];
  t.equal(boPayout.held_reason, 'tax_form_required');
  const row = (p: { id: string }) => page.locator(`tr[data-payout="${p.id}"]`);
  await row(anaPayout).getByText('$80.00').waitFor();
  await row(boPayout).getByText('Held: tax form required').waitFor();
  t.ok(
    await row(boPayout)
      .getByRole('button', { name: `Mark sent payout ${boPayout.id}` })
      .isDisabled(),
    'held: cannot be sent',
  );
  t.same(await seriousViolations(page), [], 'axe: the Payouts page');

  // The PayPal batch file of the pending payouts: ana's row (bo is held, cy has no PayPal details).
  const downloading = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export pending as CSV' }).click();
  const download = await downloading;
  t.match(download.suggestedFilename(), /^payouts-paypal-\d{4}-\d{2}-\d{2}\.csv$/);
  const rows = parse(await readFile(await download.path(), 'utf8'));
  t.same(
    rows.map((r) => r.slice(0, 4)),
    [['ana.pay@example.com', '80.00', 'USD', anaPayout.id]],
  );

  await row(anaPayout)
    .getByRole('button', { name: `Mark sent payout ${anaPayout.id}` })
    .click();
  await row(anaPayout).getByLabel('Reference').fill('PAYPAL-BATCH-1');
  await row(anaPayout).getByRole('button', { name: 'Confirm sent' }).click();
  await row(anaPayout).locator('.badge-sent').waitFor();
  t.match((await m.client.get(`/api/v1/payouts/${anaPayout.id}`)).body, {
    status: 'sent',
    reference: 'PAYPAL-BATCH-1',
  });
  await row(anaPayout)
    .getByRole('button', { name: `Mark paid payout ${anaPayout.id}` })
    .click();
  await row(anaPayout).locator('.badge-paid').waitFor();
  t.equal((await m.client.get(`/api/v1/payouts/${anaPayout.id}`)).body.status, 'paid');
  t.equal((await m.client.get(`/api/v1/affiliates/${ana.id}`)).body.lifetime_commissions_paid, 80);

  await row(cyPayout)
    .getByRole('button', { name: `Mark sent payout ${cyPayout.id}` })
    .click();
  await row(cyPayout).getByRole('button', { name: 'Confirm sent' }).click();
  await row(cyPayout)
    .getByRole('button', { name: `Mark failed payout ${cyPayout.id}` })
    .click();
  await row(cyPayout).getByLabel('Reason').fill('account_closed');
  await row(cyPayout).getByRole('button', { name: 'Confirm failed' }).click();
  await row(cyPayout).locator('.badge-failed').waitFor();
  await row(cyPayout).getByText('account_closed').waitFor();
  t.match((await m.client.get(`/api/v1/payouts/${cyPayout.id}`)).body, {
    status: 'failed',
    failure_reason: 'account_closed',
  });

  await page.getByLabel('Status').selectOption('paid');
  await eventually(async () => ((await page.locator('tr[data-payout]').count()) === 1 ? true : undefined), 5000);
  await row(anaPayout).waitFor();

  await page.getByLabel('Status').selectOption('pending');
  await row(boPayout)
    .getByRole('button', { name: `Cancel payout ${boPayout.id}` })
    .click();
  await page.getByText('No payout matches.').waitFor();
  t.equal((await m.client.get(`/api/v1/payouts/${boPayout.id}`)).body.status, 'canceled');
  t.same(consoleErrors, [], 'no console errors');
});

t.test('the payout settings are edited on the Settings page', async (t) => {
  const m = await payoutMerchant(platform);
  const email = 'settings@example.com';
  await createDashboardUser(platform.sql, m.id, email);
  const { page, consoleErrors } = await openPage(t);
  await signInBrowser(page, platform.baseUrl, email);
  await page.goto(`${platform.baseUrl}/dashboard/settings`);
  await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
  t.equal(await page.getByLabel('Minimum payout').inputValue(), '50');
  t.equal(await page.getByLabel('Payout day').inputValue(), '');
  t.equal(await page.getByLabel('Tax form policy').inputValue(), 'us_threshold');
  await page.getByLabel('Minimum payout').fill('25.50');
  await page.getByLabel('Payout day').fill('15');
  await page.getByLabel('Tax form policy').selectOption('required');
  await page.getByRole('button', { name: 'Save programme' }).click();
  await page.getByText('Settings saved.').waitFor();
  const [row] = await platform.sql<{ settings: Record<string, unknown> }[]>`
    select settings from merchants where id = ${m.id}`;
  t.match(row!.settings, { min_payout: '25.50', payout_day: 15, tax_form_policy: 'required' });

  await page.getByLabel('Payout day').fill('');
  await page.getByRole('button', { name: 'Save programme' }).click();
  await eventually(async () => {
    const [after] = await platform.sql<{ settings: Record<string, unknown> }[]>`
      select settings from merchants where id = ${m.id}`;
    return after!.settings['payout_day'] === null ? true : undefined;
  }, 5000);
  t.same(consoleErrors, [], 'no console errors');
});
