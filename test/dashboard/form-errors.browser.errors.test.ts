import t from 'tap';
import {
  dashboardMerchant,
  openPage,
  seriousViolations,
  signInBrowser,
  startDashboardPlatform,
} from '../helpers/dashboard.ts';

// A form the API refuses (INVALID_INPUT): the message in words for the form, and each refused field's problem under
// that field, as the API's details name it; a good submit clears them.
const { platform } = await startDashboardPlatform(t);
const base = platform.baseUrl;

t.test("the Settings form shows the API's per-field problem under the field", async (t) => {
  const m = await dashboardMerchant(platform);
  const { page } = await openPage(t);
  await signInBrowser(page, base, m.email);
  await page.goto(`${base}/dashboard/settings`);
  // The browser takes any URL; the API takes http(s) only.
  await page.getByLabel('Landing URL').fill('ftp://files.example.com/');
  await page.getByRole('button', { name: 'Save programme' }).click();
  await page
    .getByRole('alert')
    .filter({ hasText: /^The request is invalid: landing_url/ })
    .waitFor();
  const landing = page.locator('label.field').filter({ hasText: 'Landing URL' });
  t.match(await landing.locator('.field-error').textContent(), /^must match pattern/, 'under the refused field');
  t.equal(await page.locator('.field-error').count(), 1, 'and under no other');
  t.same(await seriousViolations(page), [], 'axe with the errors shown');

  await page.getByLabel('Landing URL').fill('https://shop.example.com/');
  await page.getByRole('button', { name: 'Save programme' }).click();
  await page.getByText('Settings saved.').waitFor();
  t.equal(await page.locator('.field-error').count(), 0, 'a good submit clears them');
});

t.test('a request that gets no answer: the failure in words, like a refusal', async (t) => {
  const m = await dashboardMerchant(platform);
  const { page } = await openPage(t);
  await signInBrowser(page, base, m.email);
  // The connection fails (offline) for the Settings form's save only.
  await page.route('**/dashboard/api/settings', (route) =>
    route.request().method() === 'GET' ? route.continue() : route.abort('internetdisconnected'),
  );
  await page.goto(`${base}/dashboard/settings`);
  await page.getByLabel('Landing URL').fill('https://shop.example.com/');
  await page.getByRole('button', { name: 'Save programme' }).click();
  await page
    .getByRole('alert')
    .filter({ hasText: 'The request failed; check the connection and try again.' })
    .waitFor();
  t.equal(await page.locator('.field-error').count(), 0, 'no field is blamed');
});
