import t from 'tap';
import type { Page } from 'playwright-core';
import { createAffiliate } from '../events/setup.ts';
import {
  dashboardMerchant,
  openPage,
  overflowingElements,
  seriousViolations,
  signInBrowser,
  startDashboardPlatform,
} from '../helpers/dashboard.ts';
import { onboardingLinksPath, payoutDetailsPath, taxFormsPath } from './setup.ts';

// The onboarding link in real Chromium: made with the dashboard's button, opened without key or sign-in, used once.
const { platform } = await startDashboardPlatform(t);
const base = platform.baseUrl;

/** The link's page on this test's gateway (the URL names PUBLIC_BASE_URL's host; the path is what counts). */
const onThisGateway = (url: string) => base + new URL(url).pathname;

async function fillForm(page: Page, tin: string) {
  await page.getByLabel('Form', { exact: true }).selectOption('W-9');
  await page.getByLabel('Legal name').fill('Olive Onboard');
  await page.getByLabel('Signature (type your name)').fill('Olive Onboard');
  await page.getByLabel('Signed on').fill('2026-11-02');
  await page.getByLabel('Street and number').fill('1 Elm Street');
  await page.getByLabel('City').fill('Austin');
  await page.getByLabel('State or region').fill('TX');
  await page.getByLabel('Postal code').fill('73301');
  await page.getByLabel('Country (two letters, e.g. US, DE)').fill('US');
  await page.getByLabel('Tax classification').selectOption('individual');
  await page.getByLabel('TIN type').selectOption('ssn');
  await page.getByLabel('TIN', { exact: true }).fill(tin);
  await page.getByLabel('Paid by').selectOption('bank');
  await page.getByLabel('IBAN').fill('GB82 WEST 1234 5698 7654 32');
}

t.test(
  'a link from the dashboard works once: the form submits, the API and the dashboard show it on file',
  async (t) => {
    const m = await dashboardMerchant(platform);
    const affiliate = await createAffiliate(m.client, 'olive@example.com', { display_name: 'Olive Onboard' });
    const merchant = await openPage(t);
    await signInBrowser(merchant.page, base, m.email);
    await merchant.page.goto(`${base}/dashboard/affiliates/${affiliate.id}`);
    await merchant.page.getByRole('heading', { level: 2, name: 'Tax form and payout details' }).waitFor();
    await merchant.page.getByTestId('tax-form').getByText('No tax form on file.').waitFor();
    await merchant.page.getByRole('button', { name: 'Create onboarding link' }).click();
    const url = (await merchant.page.getByTestId('onboarding-url').textContent())!;
    t.match(url, /\/onboarding\/[A-Za-z0-9_-]{43}$/);

    // The affiliate: another browser context, no dashboard session, no key.
    const { page, consoleErrors } = await openPage(t);
    const opened = await page.goto(onThisGateway(url));
    t.equal(opened!.status(), 200);
    await page.getByRole('heading', { level: 1, name: 'Tax form and payout details' }).waitFor();
    t.ok(await page.getByText('No tax form on file.').isVisible(), 'nothing on file yet');
    t.same(await seriousViolations(page), [], 'axe: the onboarding page');

    // An invalid SSN: the page again, naming the field, without the number typed.
    await fillForm(page, '666-12-3456');
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByRole('alert').getByText('tax_form.tin').waitFor();
    t.notMatch(await page.content(), /666-12-3456|666123456/, 'the refused TIN is not written back');

    await fillForm(page, '123-45-6789');
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByRole('heading', { level: 1, name: 'Thank you, Olive Onboard' }).waitFor();
    const onFile = page.getByRole('region', { name: 'On file' });
    t.match(await onFile.textContent(), /W-9 \(valid\).*\*{5}6789.*\*{5}5432/s);
    t.notMatch(await page.content(), /123-45-6789|123456789|WEST12345698765432/);
    t.same(
      consoleErrors,
      ['Failed to load resource: the server responded with a status of 400 (Bad Request)'],
      "no error but the refused submission's answer",
    );

    const forms = await m.client.get(taxFormsPath(affiliate.id));
    t.match(forms.body.data, [
      { form_type: 'W-9', status: 'valid', legal_name: 'Olive Onboard', tin_masked: '*****6789' },
    ]);
    t.match((await m.client.get(payoutDetailsPath(affiliate.id))).body, { method: 'bank', iban: '*****5432' });

    await merchant.page.reload();
    await merchant.page
      .getByTestId('tax-form')
      .getByText(/W-9.*Olive Onboard, TIN \*{5}6789/)
      .waitFor();
    // The payout details and their history load apart from the tax form: each is read once it is on the page.
    const details = merchant.page.getByTestId('payout-details');
    await details.getByText('Bank transfer, IBAN *****5432').waitFor();
    t.match(await details.textContent(), 'Bank transfer, IBAN *****5432');
    const linkId = (await m.client.get(`/api/v1/affiliates/${affiliate.id}/payout_details/history`)).body.data[0]
      .actor_id as string;
    t.match(linkId, /^obl_/);
    await merchant.page
      .getByRole('list', { name: 'Payout details history' })
      .getByText(`through onboarding link ${linkId}`)
      .waitFor();
    t.match(
      await merchant.page.getByRole('list', { name: 'Payout details history' }).textContent(),
      `by the affiliate through onboarding link ${linkId}: none to Bank transfer, IBAN *****5432`,
      'the change, on the affiliate page',
    );

    // Used: a clear page, no form.
    const again = await page.goto(onThisGateway(url));
    t.equal(again!.status(), 410);
    await page.getByRole('heading', { level: 1, name: 'Link already used' }).waitFor();
    t.equal(await page.locator('form').count(), 0, 'no form');
  },
);

t.test('an expired link shows a clear page without a form', async (t) => {
  const m = await dashboardMerchant(platform);
  const affiliate = await createAffiliate(m.client, 'late@example.com');
  const link = await m.client.post(onboardingLinksPath(affiliate.id));
  t.equal(link.status, 201);
  await platform.sql`
    update onboarding_links set expires_at = now() - interval '1 second' where affiliate_id = ${affiliate.id}`;
  const { page } = await openPage(t);
  const opened = await page.goto(onThisGateway(link.body.url));
  t.equal(opened!.status(), 410);
  await page.getByRole('heading', { level: 1, name: 'Link expired' }).waitFor();
  t.equal(await page.locator('form').count(), 0, 'no form');

  const unknown = await page.goto(`${base}/onboarding/${'x'.repeat(43)}`);
  t.equal(unknown!.status(), 404);
  await page.getByRole('heading', { level: 1, name: 'Link not found' }).waitFor();
  t.equal(await page.locator('form').count(), 0, 'no form');
});

t.test('the page fits a phone screen and is accessible there', async (t) => {
  const m = await dashboardMerchant(platform);
  const affiliate = await createAffiliate(m.client, 'phone@example.com');
  const link = await m.client.post(onboardingLinksPath(affiliate.id));
  const { page, consoleErrors } = await openPage(t, 375);
  await page.goto(onThisGateway(link.body.url));
  await page.getByRole('heading', { level: 1, name: 'Tax form and payout details' }).waitFor();
  t.same(await overflowingElements(page), [], 'nothing scrolls sideways at 375 px');
  t.same(await seriousViolations(page), [], 'axe at 375 px');
  t.same(consoleErrors, []);
});
