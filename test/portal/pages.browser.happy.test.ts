import type { Page } from 'playwright-core';
import t from 'tap';
import { rolledUp } from '../analytics/setup.ts';
import { clickReferralLink, createCoupon } from '../events/setup.ts';
import { openPage } from '../helpers/dashboard.ts';
import { eventually } from '../helpers/platform.ts';
import {
  approvedAffiliate,
  loaded,
  mailedLink,
  openMailedLink,
  mailsTo,
  portalMerchant,
  signInPortal,
  startPortalPlatform,
} from './pages-setup.ts';

// The affiliate portal in real Chromium: sign in by the mailed link and see the referral link on Home; a click and a
// conversion through the tracking routes under Performance and Commissions; a payout the merchant made under
// Payouts; payout details changed through a fresh link (and seen by the merchant); a merchant's portal session URL
// that signs in once.
const { platform, commissions } = await startPortalPlatform(t);
const base = platform.baseUrl;
const m = await portalMerchant(platform);
const ann = await approvedAffiliate(m.client, 'ann@example.com', { display_name: 'Ann Archer', slug: 'ann' });
await createCoupon(m.client, ann.id, 'ANN10');
const other = await approvedAffiliate(m.client, 'bob@example.com', { display_name: 'Bob Baker', slug: 'bob' });
await createCoupon(m.client, other.id, 'BOB10');

/** The sum of the chart's shown measure, from its table (money read back from its formatting). */
const seriesTotal = async (page: Page) =>
  (
    await page
      .locator('figure.chart table.visually-hidden tbody tr td')
      .evaluateAll((cells) => cells.map((c) => c.textContent ?? ''))
  ).reduce((sum, v) => sum + Number(v.replace(/[^0-9.-]/g, '')), 0);

const nav = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();

/**
 * Waits for the sign-in page and answers the path it ends at: the page is drawn first and its address replaced
 * after, by an effect of that render.
 */
async function signInShown(page: Page): Promise<string> {
  await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
  await page.waitForURL((url) => url.pathname === '/portal/sign-in', { timeout: 5_000 }).catch(() => undefined);
  return new URL(page.url()).pathname;
}

t.test('sign in by the mailed link; the pages show the click, the conversion and the payout', async (t) => {
  const { page, consoleErrors } = await openPage(t);
  await page.goto(`${base}/portal/`);
  t.equal(await signInShown(page), '/portal/sign-in', 'signed out: the sign-in page');
  await signInPortal(page, base, 'ann@example.com');
  t.equal(new URL(page.url()).pathname, '/portal/', 'the link leads home');
  t.equal(await page.title(), 'Home · Affiliate portal');
  await loaded(page);
  const link = (await page.getByTestId('referral-link').textContent())!;
  t.match(link, /ann/, "the referral link carries Ann's slug");
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  await page.getByRole('button', { name: /^Copy/ }).click();
  await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
  t.equal(await page.evaluate<string>('navigator.clipboard.readText()'), link, 'Copy puts the link on the clipboard');
  await page.getByText('ANN10').waitFor();
  t.equal(await page.getByTestId('month-clicks').textContent(), '0');

  // A click on the referral link and a sale it converts; Bob's sale is not Ann's.
  const click = await clickReferralLink(base, m.id, 'ann');
  for (const body of [
    { event_type: 'purchase', external_id: 'order-7731', amount: 1000, currency: 'USD', cookie_id: click },
    { event_type: 'purchase', external_id: 'order-9', amount: 500, currency: 'USD', coupon: 'BOB10' },
  ]) {
    const res = await m.client.post('/api/v1/events', body);
    t.equal(res.status, 201, `event ${body.external_id}`);
  }
  await eventually(
    async () => ((await m.client.get('/api/v1/commissions')).body.data.length === 2 ? true : undefined),
    15_000,
    'two commissions',
  );
  await rolledUp(platform.sql);
  await page.reload();
  await loaded(page);
  t.equal(await page.getByTestId('month-clicks').textContent(), '1', "this month's click");
  t.equal(await page.getByTestId('month-conversions').textContent(), '1', "this month's conversion, Ann's only");
  t.equal(await page.getByTestId('month-earnings').textContent(), '$100.00', "this month's earnings");

  await nav(page, 'Performance');
  await page.getByRole('heading', { level: 1, name: 'Performance' }).waitFor();
  await page.locator('figure.chart').waitFor();
  t.equal(await seriesTotal(page), 1, 'one click');
  await page.getByRole('radio', { name: 'Conversions' }).check();
  await page
    .locator('figure.chart figcaption')
    .filter({ hasText: /^Conversions/ })
    .waitFor();
  t.equal(await seriesTotal(page), 1, 'one conversion');
  await page.getByRole('radio', { name: 'Earnings' }).check();
  await page
    .locator('figure.chart figcaption')
    .filter({ hasText: /^Earnings \(USD\)/ })
    .waitFor();
  t.equal(await seriesTotal(page), 100, 'earnings in the programme currency');
  await page.getByRole('combobox', { name: 'Range' }).selectOption({ label: 'Last 7 days' });
  await eventually(
    async () => ((await page.locator('figure.chart table.visually-hidden tbody tr').count()) === 8 ? true : undefined),
    5000,
    'eight days',
  );
  t.equal(await seriesTotal(page), 100, 'the same earnings over 7 days');

  await nav(page, 'Commissions');
  await page.getByRole('heading', { level: 1, name: 'Commissions' }).waitFor();
  await loaded(page);
  const rows = await page
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent ?? '')));
  t.equal(rows.length, 1, "Ann's commission only");
  t.equal(rows[0]![1], '$100.00');
  t.match(rows[0]![3], /^•+\d{1,4}$/, 'the order masked');
  t.notMatch(rows[0]![3], /order-7731/, 'never the order id whole');

  // The merchant pays: the commission is approved (no hold) and a payout made through the API.
  await commissions.approveEndedHolds();
  const made = await m.client.post('/api/v1/payouts');
  t.equal(made.status, 201, 'payouts made');
  const payout = (made.body.data as { id: string; affiliate_id: string }[]).find((p) => p.affiliate_id === ann.id);
  t.ok(payout, "a payout for Ann's $100");
  await nav(page, 'Payouts');
  await page.getByRole('heading', { level: 1, name: 'Payouts' }).waitFor();
  const row = page.locator(`tr[data-payout="${payout!.id}"]`);
  await row.waitFor();
  t.match(await row.textContent(), /\$100\.00/, 'its amount');
  t.equal(await page.locator('tr[data-payout]').count(), 1, "Ann's payout only");

  await nav(page, 'Team');
  await page.getByRole('heading', { level: 1, name: 'Team' }).waitFor();
  await loaded(page);
  t.match(await page.getByTestId('recruits').textContent(), /^0 affiliates/);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
  await page.goto(`${base}/portal/commissions`);
  t.equal(await signInShown(page), '/portal/sign-in', 'signed out for good');
  t.same(
    consoleErrors.filter((e) => !e.startsWith('Failed to load resource')),
    [],
    'no script errors',
  );
});

t.test('payout details change only through a fresh mailed link; the merchant sees the change', async (t) => {
  const { page, consoleErrors } = await openPage(t);
  const before = (await mailsTo(base, 'ann@example.com')).length;
  await signInPortal(page, base, 'ann@example.com', before);
  await nav(page, 'Payout settings');
  await page.getByRole('heading', { level: 1, name: 'Payout settings' }).waitFor();
  await loaded(page);
  t.equal(await page.getByLabel('PayPal e-mail').count(), 0, 'no form without a fresh link');
  await page.getByRole('button', { name: 'Send me a link to change them' }).click();
  await page.getByText('Check your e-mail').waitFor();
  await openMailedLink(page, base, await mailedLink(base, 'ann@example.com', /payout details/i, before + 2));
  await page.getByRole('heading', { level: 1, name: 'Payout settings' }).waitFor();
  t.equal(new URL(page.url()).pathname, '/portal/payout-settings', 'the link leads to Payout settings');
  await page.getByLabel('Paid by').selectOption('paypal');
  await page.getByLabel('PayPal e-mail').fill('ann.payments@example.com');
  await page.getByRole('button', { name: 'Save payout details' }).click();
  await page.getByText('Your payout details are saved.').waitFor();
  const shown = (await page.getByTestId('payout-details').textContent())!;
  t.match(shown, /PayPal/);
  t.notMatch(shown, /ann\.payments@example\.com/, 'masked on the page');

  const history = await m.client.get(`/api/v1/affiliates/${ann.id}/payout_details/history`);
  t.equal(history.body.data.length, 1, 'the merchant sees the change');
  t.equal((await m.client.get(`/api/v1/affiliates/${ann.id}/payout_details`)).body.method, 'paypal');
  await eventually(
    async () =>
      (await mailsTo(base, 'ann@example.com')).some((mail) => /were changed/.test(mail.subject)) ? true : undefined,
    10_000,
    'the payout details changed mail',
  );
  t.same(
    consoleErrors.filter((e) => !e.startsWith('Failed to load resource')),
    [],
    'no script errors',
  );
});

t.test("a merchant's portal session URL signs the affiliate in once", async (t) => {
  // The merchant's programme: its public slug (the recruit link's) and the origin its app frames the portal from.
  await platform.sql`
    insert into programmes (merchant_id, slug, frame_origins) values (${m.id}, 'annshop', '{https://app.shop.example}')`;
  const made = await m.client.post(`/api/v1/affiliates/${ann.id}/portal_sessions`, {
    return_url: 'https://app.shop.example/partners',
  });
  t.equal(made.status, 201);
  t.equal(made.body.object, 'portal_session');
  const path = new URL(made.body.url as string).pathname;
  const { page } = await openPage(t);
  await page.goto(`${base}${path}`);
  await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
  await loaded(page);
  t.match(await page.getByTestId('referral-link').textContent(), /ann/, "Ann's portal");
  t.equal(await page.getByLabel('Programme').count(), 0, 'no programme switcher when embedded');
  t.equal(
    await page.getByRole('link', { name: 'Back', exact: true }).getAttribute('href'),
    'https://app.shop.example/partners',
    'a Back link to the return URL',
  );
  await nav(page, 'Team');
  await page.getByRole('heading', { level: 1, name: 'Team' }).waitFor();
  t.match(await page.getByTestId('recruit-link').textContent(), /\/p\/annshop\?ref=ann$/, 'the recruit link');
  const again = await openPage(t);
  await again.page.goto(`${base}${path}`);
  await again.page.getByRole('heading', { level: 1, name: 'This link has expired' }).waitFor();
  t.pass('the second use is refused');
});
