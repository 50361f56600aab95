import type { Page } from 'playwright-core';
import t from 'tap';
import { loadEventsConfig } from '@platform/events/config';
import { startEventsService } from '@platform/events/service';
import { createCoupon, setSettings } from '../events/setup.ts';
import { startCommissions } from '../helpers/commissions.ts';
import {
  dashboardMerchant,
  openPage,
  overflowingElements,
  seriousViolations,
  signInBrowser,
} from '../helpers/dashboard.ts';
import { approvedCommissions } from '../helpers/payouts.ts';
import { captureLogger, eventually, startPlatform } from '../helpers/platform.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { startDispatcher } from '../helpers/webhooks.ts';

// Every dashboard page on a phone's width (390 px), each with rows in its tables and the long e-mails, ids and URLs
// that real data has: the document never scrolls sideways (tables scroll inside their own box) and axe still passes.
const platform = await startPlatform(t, { env: { LOG_LEVEL: 'info' } });
const { service: commissions } = await startCommissions(t, platform);
const events = await startEventsService(loadEventsConfig({ ...platform.env }), captureLogger('events').log);
t.teardown(() => events.close());
await startDispatcher(t, platform);
const base = platform.baseUrl;

const LONG = 'a-rather-long-mailbox-name-for-the-narrow-screen-check';
const m = await dashboardMerchant(platform, 'scale', `${LONG}.owner@merchant-with-a-long-domain.example.com`);
await setSettings(platform.sql, m.id, { default_rate: 0.1, hold_days: 0 });
/** Polls the database (not the API: a busy machine's 503s would only add noise) until `query` finds a row. */
const rowAppears = (what: string, query: () => PromiseLike<readonly unknown[]>) =>
  eventually(async () => ((await query()).length > 0 ? true : undefined), 20_000, what);
const parent = await m.client.post('/api/v1/affiliates', {
  email: `${LONG}.parent@affiliates-with-a-long-domain.example.com`,
  display_name: 'Parent With A Rather Long Display Name',
});
await m.client.post('/api/v1/affiliates', {
  email: `${LONG}.child@affiliates-with-a-long-domain.example.com`,
  parent_email: parent.body.email,
  status: 'pending',
});
await createCoupon(m.client, parent.body.id, 'A-RATHER-LONG-COUPON-CODE-FOR-PHONES');
// An approved commission paid out, then (held for a month) a pending one for the Overview.
await approvedCommissions(platform, commissions, m.id, parent.body.id, [{ amount: '800.00' }]);
// Seeding asserts nothing through tap: an assertion at the top would start the root test, which ends on its own.
const payout = await m.client.post('/api/v1/payouts', {});
if (payout.status !== 201) throw new Error(`creating payouts: ${payout.status} ${payout.text}`);
await setSettings(platform.sql, m.id, { hold_days: 30 });
await m.client.post('/api/v1/events', {
  event_type: 'purchase',
  external_id: `order-${LONG}`,
  amount: 250,
  currency: 'USD',
  coupon: 'a-rather-long-coupon-code-for-phones',
});
await rowAppears(
  'a pending commission',
  () => platform.sql`select 1 from commissions where merchant_id = ${m.id} and status = 'pending'`,
);
// A webhook endpoint with a long URL and a delivered test event (its attempts are a table).
const receiver = await startReceiver(t);
const endpoint = await m.client.post('/api/v1/webhook_endpoints', {
  url: `${receiver.url}/${LONG}/${LONG}`,
  description: 'Orders and payouts for the accounting system',
});
if (endpoint.status !== 201) throw new Error(`creating an endpoint: ${endpoint.status} ${endpoint.text}`);
await m.client.post(`/api/v1/webhook_endpoints/${endpoint.body.id}/test`, { event_type: 'affiliate.created' });
await rowAppears(
  'a delivery attempt',
  () => platform.sql`
    select 1 from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
    where d.endpoint_id = ${endpoint.body.id}`,
);
const [key] = await platform.sql<{ id: string }[]>`select id from api_keys where merchant_id = ${m.id}`;

/** Each page: its path, its title, and what it shows once its data is in (a table row, mostly). */
const PAGES: [string, string, string][] = [
  ['/', 'Overview', `text=${LONG}.child`],
  ['/analytics', 'Analytics', `text=order-${LONG}`],
  ['/affiliates', 'Affiliates', 'tbody tr'],
  [`/affiliates/${parent.body.id}`, 'Affiliate', `text=${LONG}.child`],
  ['/commissions', 'Commissions', 'tbody tr'],
  ['/payouts', 'Payouts', 'tr[data-payout]'],
  // Balance with an account and its tables at this width: balance.browser.happy.test.ts.
  ['/balance', 'Balance', 'text=Open a connected account'],
  ['/webhooks', 'Webhooks', 'tbody tr'],
  [`/webhooks/${endpoint.body.id}`, 'Webhook endpoint', 'li.delivery tbody tr'],
  ['/settings/keys', 'API keys', 'tbody tr'],
  [`/settings/keys/${key!.id}`, 'API key', 'figure.chart'],
  ['/settings', 'Settings', 'text=A-RATHER-LONG-COUPON-CODE-FOR-PHONES'],
  ['/settings/plan', 'Plan', '#plans-heading'],
  ['/no-such-page', 'Not found', 'text=Back to the overview'],
];

/** How far the document reaches past the viewport, in px (0 when it does not scroll sideways). */
const sideways = (page: Page) =>
  page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');

t.test('every page at 390 px: no sideways scroll, tables scroll in their card, axe passes', async (t) => {
  const { page, consoleErrors } = await openPage(t, 390);
  await page.goto(`${base}/dashboard/`);
  await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
  t.equal(await sideways(page), 0, 'sign-in: the document does not scroll sideways');
  await signInBrowser(page, base, m.email);
  for (const [path, title, shown] of PAGES) {
    await page.goto(`${base}/dashboard${path}`);
    await page.getByRole('heading', { level: 1, name: title, exact: true }).waitFor();
    await page.locator(shown).first().waitFor();
    // The page's data is in: no loading message left. (Polled through locators: a waitForFunction predicate is
    // evaluated as a string, which the dashboard's CSP refuses.)
    const loading = page.locator('[role=status]').filter({ hasText: /^Loading/ });
    for (let waited = 0; (await loading.count()) > 0; waited += 100) {
      if (waited > 30_000) throw new Error(`${path}: still loading after 30 s`);
      await page.waitForTimeout(100);
    }
    t.equal(await page.title(), `${title} · Dashboard`, `${path}: the tab's title`);
    t.equal(await sideways(page), 0, `${path}: the document does not scroll sideways`);
    t.same(await overflowingElements(page), [], `${path}: nothing wider than 390 px outside a box that scrolls`);
    t.same(await seriousViolations(page), [], `${path}: axe`);
    t.equal(await page.getByRole('navigation', { name: 'Main' }).count(), 1, `${path}: one navigation landmark`);
  }
  t.same(
    consoleErrors.filter((e) => !e.startsWith('Failed to load resource')),
    [],
    'no script errors',
  );
});

t.test('a table wider than the screen scrolls inside its own box', async (t) => {
  const { page } = await openPage(t, 390);
  await signInBrowser(page, base, m.email);
  await page.goto(`${base}/dashboard/commissions`);
  await page.locator('tbody tr').first().waitFor();
  // A string, not a function: the TypeScript loader's helpers do not exist in the page.
  const box = await page.evaluate<{ scrollWidth: number; clientWidth: number; overflowX: string }>(`(() => {
    const el = document.querySelector('.table-wrap');
    return { scrollWidth: el.scrollWidth, clientWidth: el.clientWidth, overflowX: getComputedStyle(el).overflowX };
  })()`);
  t.ok(box.scrollWidth > box.clientWidth, 'the table is wider than its box', box);
  t.equal(box.overflowX, 'auto', 'and the box scrolls');
  t.equal(await sideways(page), 0, 'the page does not');
});
