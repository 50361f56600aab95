import t from 'tap';
import {
  dashboardMerchant,
  openPage,
  overflowingElements,
  seriousViolations,
  signInBrowser,
} from '../helpers/dashboard.ts';
import { startPayments } from '../payments/setup.ts';
import { startDispatcher } from '../helpers/webhooks.ts';

// The newcomer's whole path in real Chromium, with no operator step: sign up, the verification link from the
// development mailbox, then Settings › Plan: the plans, declined with the declining test card (still Free), upgraded
// to Growth with 4242 4242 4242 4242, and an API key created.
const { platform } = await startPayments(t);
await startDispatcher(t, platform);
const base = platform.baseUrl;

const mailbox = async () =>
  ((await (await fetch(`${base}/dev/mailbox`)).json()) as { mails: { to: string; links: string[] }[] }).mails;

t.test('sign up, verify, upgrade to Growth with the test card, then create an API key', async (t) => {
  const { page } = await openPage(t);
  // The Overview signed in to asks for commissions, which no service answers in this file: the page's own requests
  // are watched instead of the console.
  const refused: string[] = [];
  page.on('response', (r) => {
    const url = r.url();
    if (/\/dashboard\/api\/(billing|keys)/.test(url) && r.status() >= 400 && r.status() !== 400)
      refused.push(`${r.status()} ${url}`);
  });
  const email = `newcomer-${Date.now()}@trailhead.example`;
  await page.goto(`${base}/dashboard/signup`);
  await page.getByLabel('Company name').fill('Trailhead Gear');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill('a long enough password');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { level: 1, name: 'Check your e-mail' }).waitFor();
  let mail: { links: string[] } | undefined;
  for (let i = 0; i < 200 && !mail; i++) {
    mail = (await mailbox()).find((m) => m.to === email);
    if (!mail) await new Promise((r) => setTimeout(r, 50));
  }
  const link = new URL(mail!.links[0]!);
  await page.goto(`${base}${link.pathname}${link.search}`);
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  const [m] = await platform.sql<
    { id: string }[]
  >`select merchant_id as id from dashboard_users where email = ${email}`;

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
  await page.getByText('API keys need the Growth plan or higher').waitFor();
  await page.getByRole('link', { name: 'upgrade' }).click();
  await page.getByRole('heading', { level: 1, name: 'Plan' }).waitFor();
  const plans = page.getByRole('table', { name: 'Plans with their prices and limits' });
  t.match(await plans.textContent(), /Growth\$99\.00 a month/);
  t.match(await plans.textContent(), /EnterpriseContact us/);
  t.match(await page.getByText('You are on').textContent(), /You are on Free/);
  t.same(await seriousViolations(page), [], 'axe: the plan page');

  await page.getByLabel('New plan').selectOption('growth');
  await page.getByLabel('Card number').fill('4000 0000 0000 0002');
  await page.getByLabel('Expiry (MM/YY)').fill('12/34');
  await page.getByLabel('CVC').fill('123');
  await page.getByRole('button', { name: 'Upgrade' }).click();
  await page.getByText('Your card was declined.').first().waitFor();
  t.match(await page.getByText('You are on').textContent(), /Free/, 'declined: still Free');

  await page.getByLabel('Card number').fill('4242 4242 4242 4242');
  await page.getByRole('button', { name: 'Upgrade' }).click();
  await page.getByText('Upgraded to Growth: $99.00 paid.').waitFor();
  await page.getByText(/You are on Growth, paid until/).waitFor();
  const receipts = page.locator('section', { has: page.getByRole('heading', { name: 'Receipts' }) });
  t.match(await receipts.textContent(), /free → growth\$99\.00visa •••• 4242/);
  t.same(await seriousViolations(page), [], 'axe: after the upgrade');

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
  await page.getByLabel('Read-only').check();
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('button', { name: 'Copy key' }).waitFor();
  const [key] = await platform.sql`select id from api_keys where merchant_id = ${m!.id} and revoked_at is null
    and created_at > now() - interval '1 minute'`;
  t.ok(key, 'the key was made');

  // A downgrade waits for the month paid for to end.
  await page.goto(`${base}/dashboard/settings/plan`);
  await page.getByLabel('Plan after this month').selectOption('free');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText(/Free applies when the month you paid for ends/).waitFor();
  t.equal(await platform.sql`select 1 from merchants where id = ${m!.id} and plan = 'growth'`.then((r) => r.length), 1);
  t.same(await seriousViolations(page), [], 'axe: with a downgrade scheduled');
  t.same(refused, [], 'no request refused but the declined card');
});

t.test('the plan page at 390 px: nothing overflows, axe passes', async (t) => {
  const m = await dashboardMerchant(platform, 'free');
  const { page } = await openPage(t, 390);
  await signInBrowser(page, base, m.email);
  await page.goto(`${base}/dashboard/settings/plan`);
  await page.getByRole('heading', { level: 1, name: 'Plan' }).waitFor();
  t.same(await overflowingElements(page), [], 'no overflow');
  t.same(await seriousViolations(page), [], 'axe at 390 px');
});
