import t from 'tap';
import { setSettings } from '../events/setup.ts';
import {
  dashboardMerchant,
  openPage,
  seriousViolations,
  signInBrowser,
  startDashboardPlatform,
} from '../helpers/dashboard.ts';
import { eventually } from '../helpers/platform.ts';
import { startReceiver } from '../helpers/receiver.ts';

// Affiliates and Commissions in real Chromium: changes go through the public API's operations, with their events.
const { platform } = await startDashboardPlatform(t, { services: ['events', 'commissions', 'dispatcher'] });
const base = platform.baseUrl;

t.test('an affiliate created in the browser, with a parent, appears in GET /api/v1/affiliates', async (t) => {
  const m = await dashboardMerchant(platform);
  const parent = await m.client.post('/api/v1/affiliates', { email: 'parent@example.com', display_name: 'Pat Parent' });
  const { page, consoleErrors } = await openPage(t);
  await signInBrowser(page, base, m.email);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Affiliates' }).click();
  await page.getByRole('heading', { level: 1, name: 'Affiliates' }).waitFor();
  await page.getByLabel('E-mail', { exact: true }).first().fill('newbie@example.com');
  await page.getByLabel('Display name (optional)').fill('Nina Newbie');
  await page.getByLabel('Parent’s e-mail (optional)').fill('parent@example.com');
  await page.getByLabel('Starts as').selectOption('pending');
  await page.getByRole('button', { name: 'Add affiliate' }).click();
  await page.getByRole('heading', { level: 2, name: 'Nina Newbie' }).waitFor();
  t.same(await seriousViolations(page), [], 'axe: an affiliate');

  const listed = await m.client.get('/api/v1/affiliates?status=pending');
  t.equal(listed.status, 200);
  t.match(listed.body.data, [
    { email: 'newbie@example.com', display_name: 'Nina Newbie', status: 'pending', parent_id: parent.body.id },
  ]);
  const id = listed.body.data[0].id as string;
  t.ok(page.url().endsWith(`/dashboard/affiliates/${id}`), 'the detail page of the new affiliate');
  t.match(await page.getByTestId('referral-url').textContent(), /\/r\/mer_[0-9a-z]+\/nina|newbie/);

  await page.getByRole('button', { name: 'Approve' }).click();
  await page.locator('.badge-approved').first().waitFor();
  t.equal(
    (await m.client.get(`/api/v1/affiliates/${id}`)).body.status,
    'approved',
    'approved through the API operation',
  );
  const [event] =
    await platform.sql`select type from outbox where merchant_id = ${m.id} and type = 'affiliate.approved' and data->>'id' = ${id}`;
  t.ok(event, 'affiliate.approved emitted');

  // A custom rate and a tier, through the API's update operation.
  const [tier] = await platform.sql<{ id: string }[]>`
    insert into tiers (id, merchant_id, name, rate, threshold) values (${`tier_${id.slice(4)}`}, ${m.id}, 'Gold', 0.2, 1000) returning id`;
  await page.reload();
  await page.getByLabel('Custom rate (%)').fill('12.5');
  await page.getByRole('combobox', { name: /^Tier/ }).selectOption({ label: 'Gold (20%)' });
  await page.getByRole('button', { name: 'Save rate and tier' }).click();
  await eventually(
    async () => {
      const body = (await m.client.get(`/api/v1/affiliates/${id}`)).body;
      return body.custom_commission_rate === 0.125 && body.tier_id === tier!.id ? true : undefined;
    },
    5000,
    'the rate and tier saved',
  );

  await page.getByLabel('New coupon code').fill('NINA10');
  await page.getByRole('button', { name: 'Add coupon' }).click();
  await page.getByText('NINA10', { exact: true }).waitFor();

  // Lineage: the parent's page lists the child; the search by e-mail finds it.
  await page.getByRole('link', { name: parent.body.id }).click();
  await page.getByRole('heading', { level: 2, name: 'Pat Parent' }).waitFor();
  await page.getByRole('link', { name: 'Nina Newbie' }).waitFor();
  await page.goto(`${base}/dashboard/affiliates`);
  await page.getByRole('search').getByLabel('E-mail').fill('NEWBIE@example.com');
  await page.getByRole('search').getByRole('button', { name: 'Search' }).click();
  await eventually(async () => ((await page.getByRole('row').count()) === 2 ? true : undefined), 5000, 'one match');
  t.same(await seriousViolations(page), [], 'axe: Affiliates');
  t.same(consoleErrors, [], 'no console error');
});

t.test('approving a commission in the browser emits commission.approved to the merchant’s endpoint', async (t) => {
  const m = await dashboardMerchant(platform);
  await setSettings(platform.sql, m.id, { default_rate: 0.1 });
  const receiver = await startReceiver(t);
  const endpoint = await m.client.post('/api/v1/webhook_endpoints', {
    url: receiver.url,
    event_types: ['commission.approved', 'commission.voided'],
  });
  t.equal(endpoint.status, 201);
  const affiliate = await m.client.post('/api/v1/affiliates', { email: 'seller@example.com' });
  await m.client.post('/api/v1/coupons', { code: 'SELL', affiliate_id: affiliate.body.id });
  for (const order of ['o-1', 'o-2']) {
    const res = await m.client.post('/api/v1/events', {
      event_type: 'purchase',
      external_id: order,
      amount: 100,
      currency: 'USD',
      coupon: 'sell',
    });
    t.equal(res.status, 201);
  }
  const pending = await eventually(
    async () => {
      const list = await m.client.get('/api/v1/commissions?status=pending');
      return list.body.data.length === 2 ? (list.body.data as { id: string; order_id: string }[]) : undefined;
    },
    10_000,
    'two pending commissions',
  );

  const { page, consoleErrors } = await openPage(t);
  await signInBrowser(page, base, m.email);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Commissions' }).click();
  await page.getByRole('heading', { level: 1, name: 'Commissions' }).waitFor();
  await page.getByLabel('Status').selectOption('pending');
  const [first, second] = pending;
  await page.getByRole('button', { name: `Approve commission ${first!.id}` }).click();
  await eventually(
    async () => (receiver.received.some((r) => r.type === 'commission.approved') ? true : undefined),
    10_000,
    'commission.approved delivered',
  );
  const approved = JSON.parse(receiver.received.find((r) => r.type === 'commission.approved')!.body) as {
    data: { commission_id: string };
  };
  t.equal(approved.data.commission_id, first!.id, 'for the commission approved in the browser');

  await page.getByRole('button', { name: `Void commission ${second!.id}` }).click();
  await page.getByLabel('Reason').fill('order cancelled');
  await page.getByRole('button', { name: 'Confirm void' }).click();
  await eventually(
    async () => (receiver.received.some((r) => r.type === 'commission.voided') ? true : undefined),
    10_000,
    'commission.voided delivered',
  );
  t.match((await m.client.get(`/api/v1/commissions/${second!.id}`)).body, {
    status: 'voided',
    void_reason: 'order cancelled',
  });
  t.same(await seriousViolations(page), [], 'axe: Commissions');
  t.same(consoleErrors, [], 'no console error');
});

t.test('another merchant’s affiliate id in the URL shows "not found", never data', async (t) => {
  const owner = await dashboardMerchant(platform);
  const theirs = await owner.client.post('/api/v1/affiliates', {
    email: 'secret-affiliate@example.com',
    display_name: 'Sec Ret',
  });
  const intruder = await dashboardMerchant(platform, 'free');
  const { page } = await openPage(t);
  await signInBrowser(page, base, intruder.email);
  await page.goto(`${base}/dashboard/affiliates/${theirs.body.id}`);
  t.equal(await page.getByRole('alert').textContent(), 'No such affiliate');
  t.notOk((await page.content()).includes('secret-affiliate'), 'none of its data');
  await page.goto(`${base}/dashboard/commissions?affiliate_id=${theirs.body.id}`);
  await page.getByText('No commission matches.').waitFor();
});
