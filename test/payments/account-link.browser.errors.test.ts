import t from 'tap';
import { openPage, seriousViolations } from '../helpers/dashboard.ts';
import { sleep } from '../helpers/platform.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { startPayments } from './setup.ts';

t.test(
  'an account link in Chromium: the form submits, payouts are enabled, the browser lands on return_url',
  async (t) => {
    const stack = await startPayments(t);
    const site = await startReceiver(t);
    const account = await stack.test.accounts.create({ type: 'express', email: 'maker@example.com' });
    const returnUrl = `${site.url}/onboarding/return`;
    const refreshUrl = `${site.url}/onboarding/refresh`;
    const link = await stack.test.accountLinks.create({
      account: account.id,
      type: 'account_onboarding',
      refresh_url: refreshUrl,
      return_url: returnUrl,
    });
    t.equal(link.object, 'account_link');
    t.equal(link.expires_at - link.created, 300, 'five minutes');
    t.match(link.url, `${stack.platform.baseUrl}/connect/onboarding/`);

    const { page, consoleErrors } = await openPage(t);
    await page.goto(link.url);
    await page.getByRole('heading', { level: 1, name: 'Set up payouts for maker@example.com' }).waitFor();
    t.same(await seriousViolations(page), [], 'no serious accessibility violations');

    // A first try without the account number and the agreement: the page says what is missing, keeps the rest.
    await page.getByLabel('Business name').fill('Maker Goods');
    await page.getByLabel('What the business sells').fill('Handmade furniture');
    await page.getByLabel('Account holder name').fill('Sam Maker');
    await page.getByLabel('Routing number').fill('110000000');
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.getByText('Enter the account number: 4 to 17 digits.').waitFor();
    await page.getByText('Accept the services agreement to continue.').waitFor();
    t.equal(await page.getByLabel('Business name').inputValue(), 'Maker Goods');
    t.equal((await stack.test.accounts.retrieve(account.id)).payouts_enabled, false);

    await page.getByLabel('Account number').fill('000123456789');
    await page.getByLabel('I accept the services agreement').check();
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.waitForURL(returnUrl);
    t.equal(page.url(), returnUrl);

    const onboarded = await stack.test.accounts.retrieve(account.id);
    t.equal(onboarded.payouts_enabled, true);
    t.equal(onboarded.details_submitted, true);
    t.equal(onboarded.business_profile?.name, 'Maker Goods');
    const [stored] = await stack.platform.sql<{ bank_account_encrypted: string }[]>`
    select bank_account_encrypted from payment_accounts where id = ${account.id}`;
    t.notMatch(stored!.bank_account_encrypted, '000123456789', 'the bank account is encrypted at rest');
    t.notMatch(stack.logs.join('\n'), '000123456789', 'and never logged');

    // Used once: opening it again goes to refresh_url.
    await page.goto(link.url);
    await page.waitForURL(refreshUrl);
    t.equal(page.url(), refreshUrl);
    // The refused first try answered 400, which Chromium reports; nothing else went wrong in the page.
    t.same(consoleErrors, ['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  },
);

t.test('an expired account link goes to refresh_url', async (t) => {
  const stack = await startPayments(t, { paymentsEnv: { ACCOUNT_LINK_TTL_S: '1' } });
  const site = await startReceiver(t);
  const account = await stack.test.accounts.create({ type: 'express' });
  const refreshUrl = `${site.url}/refresh`;
  const link = await stack.test.accountLinks.create({
    account: account.id,
    type: 'account_onboarding',
    refresh_url: refreshUrl,
    return_url: `${site.url}/return`,
  });
  await sleep(1500);
  const { page } = await openPage(t);
  await page.goto(link.url);
  await page.waitForURL(refreshUrl);
  t.equal(page.url(), refreshUrl);
  t.equal((await stack.test.accounts.retrieve(account.id)).payouts_enabled, false);

  const unknown = await page.goto(`${stack.platform.baseUrl}/connect/onboarding/${'a'.repeat(43)}`);
  t.equal(unknown?.status(), 404);
  await page.getByRole('heading', { name: 'This link is not valid' }).waitFor();
});
