import t from 'tap';
import { createAffiliate, createCoupon, setSettings } from '../events/setup.ts';
import {
  dashboardMerchant,
  openPage,
  overflowingElements,
  seriousViolations,
  signInBrowser,
  startDashboardPlatform,
} from '../helpers/dashboard.ts';
import { eventually } from '../helpers/platform.ts';
import { startReceiver } from '../helpers/receiver.ts';

// Every page at 1280 px: its title, axe with no serious or critical violation, no console error, nothing wider than
// the screen (at 390 px, with the rows and long values real data has: narrow-screen.browser.happy.test.ts). Then
// Settings changed in the browser and read back as the services read them.
const { platform } = await startDashboardPlatform(t, { services: ['events', 'commissions', 'dispatcher'] });
const base = platform.baseUrl;

const m = await dashboardMerchant(platform, 'scale');
await setSettings(platform.sql, m.id, { default_rate: 0.1 });
const affiliate = await createAffiliate(m.client, 'star@example.com', { display_name: 'Star Seller' });
await createCoupon(m.client, affiliate.id, 'STAR');
await m.client.post('/api/v1/events', {
  event_type: 'purchase',
  external_id: 'p-1',
  amount: 250,
  currency: 'USD',
  coupon: 'star',
});
await eventually(
  async () => ((await m.client.get('/api/v1/commissions')).body.data.length === 1 ? true : undefined),
  10_000,
  'a commission',
);
const receiver = await startReceiver(t);
const endpoint = await m.client.post('/api/v1/webhook_endpoints', { url: receiver.url });
const [key] = await platform.sql<{ id: string }[]>`select id from api_keys where merchant_id = ${m.id}`;

const PAGES: [string, string][] = [
  ['/', 'Overview'],
  ['/analytics', 'Analytics'],
  ['/affiliates', 'Affiliates'],
  [`/affiliates/${affiliate.id}`, 'Affiliate'],
  ['/commissions', 'Commissions'],
  ['/payouts', 'Payouts'],
  ['/balance', 'Balance'],
  ['/webhooks', 'Webhooks'],
  [`/webhooks/${endpoint.body.id}`, 'Webhook endpoint'],
  ['/settings/keys', 'API keys'],
  [`/settings/keys/${key!.id}`, 'API key'],
  ['/settings', 'Settings'],
];

t.test('every page at 1280 px: accessible, no console error, fits the screen', async (t) => {
  const { page, consoleErrors } = await openPage(t, 1280);
  await signInBrowser(page, base, m.email);
  for (const [path, title] of PAGES) {
    await page.goto(`${base}/dashboard${path}`);
    await page.getByRole('heading', { level: 1, name: title, exact: true }).waitFor();
    // Wait for the page's data: no loading message left.
    await eventually(
      async () =>
        (await page
          .getByRole('status')
          .filter({ hasText: /^Loading/ })
          .count()) === 0
          ? true
          : undefined,
      5000,
      `${path} loaded`,
    );
    t.equal(await page.title(), `${title} · Dashboard`, `${path}: the tab's title`);
    t.same(await seriousViolations(page), [], `${path}: axe`);
    t.same(await overflowingElements(page), [], `${path}: nothing wider than 1280 px`);
    t.equal(await page.getByRole('navigation', { name: 'Main' }).count(), 1, `${path}: one navigation landmark`);
  }
  t.same(consoleErrors, [], 'no console error on any page');
});

t.test('the overview charts the last 30 days and names the top affiliate', async (t) => {
  const { page } = await openPage(t);
  await signInBrowser(page, base, m.email);
  await page.getByText('Conversions, last 30 days', { exact: true }).waitFor();
  t.equal(await page.locator('figure.chart canvas').count(), 2, 'two uPlot charts');
  const today = new Date().toISOString().slice(0, 10);
  const row = page.locator('figure.chart').first().getByRole('row', { name: today });
  t.equal(await row.getByRole('cell').textContent(), '1', 'today’s conversion in the chart’s table');
  await page.getByRole('link', { name: 'Star Seller' }).first().waitFor();
  t.match(
    await page.getByRole('heading', { name: 'Top affiliates' }).locator('xpath=..').textContent(),
    /Star Seller \$250\.00 from 1 conversions/,
  );
});

t.test('keyboard: the skip link and the navigation work without a mouse, with a visible focus', async (t) => {
  const { page } = await openPage(t);
  await signInBrowser(page, base, m.email);
  await page.goto(`${base}/dashboard/`);
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  await page.keyboard.press('Tab');
  t.equal(await page.evaluate('document.activeElement.textContent'), 'Skip to content');
  const outline = await page.evaluate('getComputedStyle(document.activeElement).outlineStyle');
  t.equal(outline, 'solid', 'the focus is visible');
  let guard = 0;
  while ((await page.evaluate('document.activeElement.textContent')) !== 'Webhooks' && guard++ < 20)
    await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
  t.equal(await page.evaluate('document.activeElement.tagName'), 'H1', 'focus moves to the new page’s heading');
});

t.test('Settings: programme, a commission rule, a tier and a user, saved as the services read them', async (t) => {
  const { page, consoleErrors } = await openPage(t);
  await signInBrowser(page, base, m.email);
  await page.goto(`${base}/dashboard/settings`);
  await page.getByLabel('Default rate (%)').fill('15');
  await page.getByLabel('Level rates (%)').fill('10, 5');
  await page.getByLabel('Hold days').fill('14');
  await page.getByLabel('Landing URL').fill('https://shop.example.com/');
  await page.getByRole('button', { name: 'Save programme' }).click();
  await page.getByText('Settings saved.').waitFor();
  await page.getByLabel('Event type').fill('signup');
  await page.getByLabel('Amount', { exact: true }).fill('5.00');
  await page.getByRole('button', { name: 'Add rule' }).click();
  await page.getByRole('button', { name: 'Remove the rule for signup' }).waitFor();
  const [row] = await platform.sql<
    { settings: Record<string, unknown> }[]
  >`select settings from merchants where id = ${m.id}`;
  t.match(row!.settings, {
    default_rate: 0.15,
    level_rates: [0.1, 0.05],
    hold_days: 14,
    landing_url: 'https://shop.example.com/',
    commission_rules: { signup: { kind: 'flat', amount: '5.00' } },
  });

  // The same schema as the services': a landing URL that is not http(s) is refused by the server, in words.
  await page.getByLabel('Landing URL').fill('ftp://files.example.com/');
  await page.getByRole('button', { name: 'Save programme' }).click();
  await page.getByText(/^The request is invalid: landing_url must match pattern/).waitFor();

  await page.getByLabel('Tier name').fill('Gold');
  await page.getByLabel('Tier rate (%)').fill('20');
  await page.getByLabel('Threshold').fill('1000');
  await page.getByRole('button', { name: 'Add tier' }).click();
  await page.getByText('Gold', { exact: true }).waitFor();
  await page.getByLabel('New user’s e-mail').fill('teammate@example.com');
  await page.getByLabel('Their password').fill('another long password');
  await page.getByLabel('Their role').selectOption('developer');
  await page.getByRole('button', { name: 'Add user' }).click();
  const teammateRole = page.getByLabel('Role of teammate@example.com');
  await teammateRole.waitFor();
  t.equal(await teammateRole.inputValue(), 'developer', 'added with the role chosen');
  const signed = await fetch(`${base}/dashboard/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'teammate@example.com', password: 'another long password' }),
  });
  t.equal(signed.status, 201, 'the new user signs in');
  t.equal(((await signed.json()) as { user: { role: string } }).user.role, 'developer');
  const teammateCookie = /dash_session=([^;]+)/.exec(signed.headers.get('set-cookie') ?? '')![1]!;
  const reread = page.waitForResponse(
    (r) => r.url().endsWith('/dashboard/api/users') && r.request().method() === 'GET',
  );
  await teammateRole.selectOption('admin');
  await reread;
  t.equal(await teammateRole.inputValue(), 'admin', 'the role changed from the list');
  await page.getByRole('button', { name: 'Remove teammate@example.com' }).click();
  await page.getByRole('button', { name: 'Confirm remove' }).click();
  await teammateRole.waitFor({ state: 'detached' });
  const after = await fetch(`${base}/dashboard/api/session`, { headers: { cookie: `dash_session=${teammateCookie}` } });
  t.same(await after.json(), { session: null }, 'the removed user’s session ended');
  const audit = page.getByRole('region', { name: 'Audit log' });
  await page.reload();
  await audit.getByText('removed teammate@example.com (admin)').waitFor();
  await audit.getByText('changed teammate@example.com from developer to admin').waitFor();
  t.same(
    consoleErrors.filter((e) => !e.includes('status of 400')),
    [],
    'no console error besides the refused value',
  );
});
