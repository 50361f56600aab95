import t from 'tap';
import {
  dashboardMerchant,
  openPage,
  overflowingElements,
  seriousViolations,
  sessionRequest,
  signInBrowser,
  signInHttp,
} from '../helpers/dashboard.ts';
import { startPayments } from '../payments/setup.ts';
import { bindPlatformAccount } from '../../scripts/admin/platform-accounts.ts';

// The Balance page in real Chromium: the gateway with the dashboard and the payments service, the merchant's
// connected account created by the platform through the official Stripe SDK.
const stack = await startPayments(t);
const { platform } = stack;
const base = platform.baseUrl;

const usd = (amount: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(amount);

t.test('onboarding by account link, funding by payment intent, balance and transactions', async (t) => {
  const m = await dashboardMerchant(platform);
  const { page, consoleErrors } = await openPage(t);
  await signInBrowser(page, base, m.email);
  // The Overview signed in to asks for commissions, which no service answers in this file: the page's own requests
  // are watched instead of the console.
  const refused: string[] = [];
  page.on('response', (r) => {
    if (r.url().includes('/dashboard/api/balance') && r.status() >= 400) refused.push(`${r.status()} ${r.url()}`);
  });
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Balance' }).click();
  await page.getByRole('heading', { level: 1, name: 'Balance' }).waitFor();
  t.same(await seriousViolations(page), [], 'axe: Balance without an account');

  // The owner opens the merchant's own connected account (test mode outside production), with no operator step.
  await page.getByRole('button', { name: 'Open a connected account' }).click();
  await page.getByText('details required').waitFor();
  const [account] = await platform.sql<{ id: string; livemode: boolean }[]>`
    select id, livemode from payment_accounts where merchant_id = ${m.id}`;
  if (!account) throw new Error('no account was opened');
  t.equal(account.livemode, false, 'a test-mode account');
  t.ok(await page.getByText(account.id).isVisible(), 'the account is shown');
  t.match(await page.locator('dl.facts').textContent(), /PayoutsNot enabled/);
  t.same(await seriousViolations(page), [], 'axe: Balance before onboarding');

  // The button opens a fresh account link: the hosted page, then back to the Balance page.
  await page.getByRole('button', { name: 'Complete onboarding' }).click();
  await page.getByRole('heading', { level: 1, name: `Set up payouts for ${m.email}` }).waitFor();
  await page.getByLabel('Business name').fill('Merchant Goods');
  await page.getByLabel('What the business sells').fill('Garden tools');
  await page.getByLabel('Account holder name').fill('Jane Doe');
  await page.getByLabel('Routing number').fill('110000000');
  await page.getByLabel('Account number').fill('000123456789');
  await page.getByLabel('I accept the services agreement').check();
  await page.getByRole('button', { name: 'Submit' }).click();
  await page.waitForURL(`${base}/dashboard/balance`);
  await page.getByRole('heading', { level: 2, name: 'Connected account' }).waitFor();
  await page.getByText('complete', { exact: true }).waitFor();
  t.match(await page.locator('dl.facts').textContent(), /PayoutsEnabled/);
  t.equal((await stack.test.accounts.retrieve(account.id)).payouts_enabled, true);
  t.ok(await page.getByRole('button', { name: 'Update onboarding details' }).isVisible());
  await page.getByText('Nothing yet: fund the account below.').waitFor();

  // Funding: a payment intent to the account with the sandbox's Visa card, pending until available.
  await page.getByLabel('Amount').fill('250.00');
  await page.getByLabel('Payment method').selectOption('pm_card_visa');
  await page.getByRole('button', { name: 'Fund' }).click();
  const notice = page.getByRole('status').filter({ hasText: 'Payment pi_' });
  await notice.waitFor();
  t.match(await notice.textContent(), /^Payment pi_[0-9a-z]+ succeeded: \$250\.00$/);
  const balance = await stack.test.balance.retrieve({}, { stripeAccount: account.id });
  const pending = balance.pending.find((b) => b.currency === 'usd')!.amount;
  t.ok(pending > 0 && pending < 25_000, 'the ledger holds the payment less its fee, pending');
  const row = page.getByRole('row', { name: /^USD/ });
  await row.waitFor();
  t.equal(await row.textContent(), `USD${usd(0)}${usd(pending / 100)}`, 'available and pending as the ledger says');

  const transactions = page.locator('section[aria-labelledby="transactions-heading"] tbody tr');
  await transactions.first().waitFor();
  t.equal(await transactions.count(), 1, 'one transaction');
  const [txn] = (await stack.test.balanceTransactions.list({ limit: 5 }, { stripeAccount: account.id })).data;
  t.equal(await transactions.first().getAttribute('data-transaction'), txn!.id);
  t.match(
    await transactions.first().textContent(),
    new RegExp(`${txn!.type}\\${usd(txn!.amount / 100)}\\${usd(txn!.fee / 100)}\\${usd(txn!.net / 100)}pending`),
  );

  // A declined card: the page says so and nothing is added.
  await page.getByLabel('Amount').fill('10.00');
  await page.getByLabel('Payment method').selectOption('pm_card_chargeDeclined');
  await page.getByRole('button', { name: 'Fund' }).click();
  await page
    .getByRole('alert')
    .filter({ hasText: /declined/i })
    .waitFor();
  t.equal(await transactions.count(), 1, 'still one transaction');
  t.same(await seriousViolations(page), [], 'axe: Balance with a balance and transactions');
  t.same(refused, [`400 ${base}/dashboard/api/balance/fund`], 'no request of the page failed but the declined one');
  t.same(
    consoleErrors.filter((e) => !e.startsWith('Failed to load resource')),
    [],
    'no script errors',
  );

  // On a phone's width the page still fits: the tables scroll inside their own boxes.
  const narrow = await openPage(t, 390);
  await signInBrowser(narrow.page, base, m.email);
  await narrow.page.goto(`${base}/dashboard/balance`);
  await narrow.page.locator('section[aria-labelledby="transactions-heading"] tbody tr').first().waitFor();
  t.same(await overflowingElements(narrow.page), [], 'nothing wider than 390 px');
  t.same(await seriousViolations(narrow.page), [], 'axe at 390 px');
});

t.test("another merchant's session sees no account and cannot fund or link it", async (t) => {
  const owner = await dashboardMerchant(platform);
  await bindPlatformAccount(platform.sql, (await stack.test.accounts.create({ type: 'express' })).id, owner.id);
  const other = await dashboardMerchant(platform);
  const session = await signInHttp(base, other.email);
  const overview = await sessionRequest(base, session, 'GET', '/dashboard/api/balance');
  t.equal(overview.status, 200);
  t.strictSame(overview.body, { account: null, available: [], pending: [] });
  const fund = await sessionRequest(base, session, 'POST', '/dashboard/api/balance/fund', {
    amount: '5.00',
    currency: 'usd',
    payment_method: 'pm_card_visa',
  });
  t.equal(fund.status, 404);
  t.equal(fund.body.error.code, 'NOT_FOUND');
  t.equal(fund.body.error.message, 'No connected account: open one on the Balance page first');
  const link = await sessionRequest(base, session, 'POST', '/dashboard/api/balance/account_link');
  t.equal(link.status, 404);
  const txns = await sessionRequest(base, session, 'GET', '/dashboard/api/balance/transactions');
  t.strictSame(txns.body, { data: [], next_cursor: null });

  const ownerSession = await signInHttp(base, owner.email);
  const noCsrf = await sessionRequest(
    base,
    ownerSession,
    'POST',
    '/dashboard/api/balance/fund',
    { amount: '5.00', currency: 'usd', payment_method: 'pm_card_visa' },
    { csrf: false },
  );
  t.equal(noCsrf.status, 403, 'funding needs the CSRF token');
  const tooPrecise = await sessionRequest(base, ownerSession, 'POST', '/dashboard/api/balance/fund', {
    amount: '5.001',
    currency: 'usd',
    payment_method: 'pm_card_visa',
  });
  t.equal(tooPrecise.status, 400);
  t.strictSame(tooPrecise.body.error.details, [{ path: 'amount', message: 'has more decimals than USD has' }]);
});

t.test('a live account has no Fund button: live money comes from real payments, not test cards', async (t) => {
  const m = await dashboardMerchant(platform);
  const account = await stack.live.accounts.create({ type: 'express', metadata: { merchant_id: m.id } });
  const { page } = await openPage(t);
  await signInBrowser(page, base, m.email);
  await page.goto(`${base}/dashboard/balance`);
  await page.getByRole('heading', { level: 2, name: 'Connected account' }).waitFor();
  t.ok(await page.getByText(account.id).isVisible(), 'the live account is shown');
  await page.getByText('Nothing yet.', { exact: true }).waitFor();
  t.equal(await page.getByRole('heading', { name: 'Fund the account' }).count(), 0, 'no funding form');
  t.equal(await page.getByRole('button', { name: 'Fund' }).count(), 0, 'no Fund button');
});
