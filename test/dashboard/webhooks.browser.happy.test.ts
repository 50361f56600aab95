import t from 'tap';
import {
  dashboardMerchant,
  openPage,
  seriousViolations,
  signInBrowser,
  startDashboardPlatform,
} from '../helpers/dashboard.ts';
import { eventually } from '../helpers/platform.ts';
import { startReceiver } from '../helpers/receiver.ts';

// Webhooks in real Chromium, on a starter merchant (webhooks need no API plan), delivering to a real local receiver.
const { platform } = await startDashboardPlatform(t, { services: ['dispatcher', 'commissions'] });
const base = platform.baseUrl;

t.test('register, test event, retry, replay one, bulk replay: all from the page', async (t) => {
  const m = await dashboardMerchant(platform, 'starter');
  // The receiver answers what `mode` says: 200, a 500 for each message's first request, or 400 (dead-letters at once).
  let mode: 'ok' | 'fail-first' | 'refuse' = 'ok';
  const seen = new Set<string>();
  const receiver = await startReceiver(t, (hook, _n, res) => {
    const first = !seen.has(hook.id);
    seen.add(hook.id);
    res.statusCode = mode === 'refuse' ? 400 : mode === 'fail-first' && first ? 500 : 200;
    res.end(res.statusCode === 200 ? 'thanks' : 'nope');
  });
  const { page, consoleErrors } = await openPage(t);
  await signInBrowser(page, base, m.email);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
  await page.getByText('No endpoint yet').waitFor();
  t.same(await seriousViolations(page), [], 'axe: Webhooks');

  await page.getByLabel('Endpoint URL').fill(receiver.url);
  await page.getByRole('button', { name: 'Register endpoint' }).click();
  await page.getByRole('heading', { level: 1, name: 'Webhook endpoint' }).waitFor();
  const endpointId = page.url().split('/').pop()!;
  t.match(endpointId, /^we_/);

  // A test event reaches the receiver and shows in the log with its attempt.
  await page.getByLabel('Event type').selectOption('commission.approved');
  await page.getByRole('button', { name: 'Send test event' }).click();
  await eventually(async () => (receiver.received.length === 1 ? true : undefined), 5000, 'the test event');
  t.equal(receiver.received[0]!.type, 'commission.approved');
  const log = page.locator('ol.deliveries');
  await refreshUntil(page, () => log.getByText('HTTP 200').count());
  const item = log.locator('li.delivery').first();
  t.match(await item.textContent(), /commission\.approved.*succeeded/);
  t.match(
    await item.getByRole('row').nth(1).textContent(),
    /HTTP 200\d+ msthanks/,
    'the attempt: status, duration, response excerpt',
  );
  t.same(await seriousViolations(page), [], 'axe: an endpoint with its log');

  // 500 then 200: the log shows the retry.
  mode = 'fail-first';
  await page.getByRole('button', { name: 'Send test event' }).click();
  await refreshUntil(page, () => log.getByText('HTTP 500').count());
  await refreshUntil(page, async () =>
    (await log.locator('li.delivery').first().getByText('HTTP 200').count()) === 1 ? 1 : 0,
  );
  const retried = await log.locator('li.delivery').first().getByRole('row').allTextContents();
  t.equal(retried.length, 3, 'two attempts');
  t.match(retried[1], /^.*HTTP 500/, 'first 500');
  t.match(retried[2], /^.*HTTP 200/, 'then 200');

  // A dead-lettered delivery replayed from the page arrives again with the same webhook-id.
  mode = 'refuse';
  await page.getByRole('button', { name: 'Send test event' }).click();
  await refreshUntil(page, () => log.locator('li.delivery').first().getByText('dead lettered').count());
  const dead = log.locator('li.delivery').first();
  const deadId = (await dead.getAttribute('data-delivery'))!;
  const [row] = await platform.sql<
    { message_id: string }[]
  >`select message_id from webhook_deliveries where id = ${deadId}`;
  const messageId = row!.message_id;
  mode = 'ok';
  const before = receiver.received.length;
  await dead.getByRole('button', { name: `Replay delivery ${deadId}` }).click();
  await eventually(async () => (receiver.received.length > before ? true : undefined), 5000, 'the replay');
  t.equal(receiver.received.at(-1)!.id, messageId, 'the same webhook-id');

  // Bulk replay: two dead-lettered deliveries, counted before confirming, then delivered.
  const windowStart = new Date(Date.now() - 1000);
  mode = 'refuse';
  for (let i = 0; i < 2; i++) {
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText(/A sample commission\.approved event is on its way/).waitFor();
  }
  await eventually(
    async () => {
      const [row] = await platform.sql<
        { n: number }[]
      >`select count(*)::int as n from webhook_deliveries where endpoint_id = ${endpointId} and status = 'dead_lettered'`;
      return row!.n === 2 ? true : undefined;
    },
    5000,
    'two dead letters',
  );
  mode = 'ok';
  const bulk = page.getByRole('form', { name: 'Bulk replay' });
  const local = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  await bulk.getByLabel('Dead-lettered from').fill(local(new Date(windowStart.getTime() - 60_000)));
  await bulk.getByLabel('until').fill(local(new Date(Date.now() + 120_000)));
  await bulk.getByRole('button', { name: 'Count deliveries to replay' }).click();
  await bulk.getByText('2 dead-lettered deliveries in that range.').waitFor();
  const beforeBulk = receiver.received.length;
  await bulk.getByRole('button', { name: 'Replay 2' }).click();
  await bulk.getByText('2 deliveries scheduled again.').waitFor();
  await eventually(
    async () => (receiver.received.length === beforeBulk + 2 ? true : undefined),
    5000,
    'the bulk replay',
  );

  // Settings: event types and threshold saved, disabled and enabled again, through the API's update operation.
  await page.getByRole('group', { name: 'Events sent to this endpoint' }).getByLabel('affiliate.created').uncheck();
  await page.getByLabel('Failure threshold').fill('7');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('of 7 before it is disabled').waitFor();
  await page.getByRole('button', { name: 'Disable endpoint' }).click();
  await page.getByRole('button', { name: 'Enable endpoint' }).waitFor();
  // A starter merchant has no working key: the stored row is read instead.
  const stored = async () =>
    (
      await platform.sql`select enabled, disabled_reason, failure_threshold, event_types from webhook_endpoints where id = ${endpointId}`
    )[0]!;
  t.match(await stored(), { enabled: false, disabled_reason: 'manual', failure_threshold: 7 });
  await page.getByRole('button', { name: 'Enable endpoint' }).click();
  await page.getByRole('button', { name: 'Disable endpoint' }).waitFor();
  const saved = await stored();
  t.equal(saved['enabled'], true);
  t.equal((saved['event_types'] as string[]).length, 11, 'eleven event types left');
  t.notOk((saved['event_types'] as string[]).includes('affiliate.created'), 'affiliate.created no longer sent');
  t.same(consoleErrors, [], 'no console error');
});

t.test('the secret is revealed after the password, and a wrong password reveals nothing', async (t) => {
  const m = await dashboardMerchant(platform, 'free');
  const receiver = await startReceiver(t);
  const { page, consoleErrors } = await openPage(t, 390);
  await signInBrowser(page, base, m.email);
  await page.goto(`${base}/dashboard/webhooks`);
  await page.getByLabel('Endpoint URL').fill(receiver.url);
  await page.getByRole('button', { name: 'Register endpoint' }).click();
  await page.getByRole('heading', { level: 1, name: 'Webhook endpoint' }).waitFor();
  await page.getByLabel('Your password').fill('not my password');
  await page.getByRole('button', { name: 'Reveal secret' }).click();
  await page.getByText('The password is not right').waitFor();
  t.equal(await page.getByTestId('webhook-secret').count(), 0, 'nothing revealed');
  await page.getByLabel('Your password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Reveal secret' }).click();
  const secret = (await page.getByTestId('webhook-secret').textContent())!;
  t.match(secret, /^whsec_/);
  await page.getByRole('button', { name: 'Rotate secret' }).click();
  await page.getByText('The new secret').waitFor();
  t.not(await page.getByTestId('webhook-secret').textContent(), secret, 'a new secret');
  t.same(await seriousViolations(page), [], 'axe at 390 px');
  t.same(
    consoleErrors.filter((e) => !e.includes('status of 403')),
    [],
    'no console error but the refused password',
  );
});

t.test('another merchant’s endpoint id in the URL shows "not found"', async (t) => {
  const owner = await dashboardMerchant(platform);
  const receiver = await startReceiver(t);
  const endpoint = await owner.client.post('/api/v1/webhook_endpoints', { url: receiver.url });
  const intruder = await dashboardMerchant(platform, 'starter');
  const { page } = await openPage(t);
  await signInBrowser(page, base, intruder.email);
  await page.goto(`${base}/dashboard/webhooks/${endpoint.body.id}`);
  t.equal(await page.getByRole('alert').textContent(), 'No such webhook endpoint');
  t.equal(await page.getByText(receiver.url).count(), 0, 'the URL is not shown');
});

/** Presses "Refresh log" until `count` is above zero (deliveries are attempted in the background). */
async function refreshUntil(page: import('playwright-core').Page, count: () => Promise<number>) {
  await eventually(
    async () => {
      if ((await count()) > 0) return true;
      await page.getByRole('button', { name: 'Refresh log' }).click();
      await page.waitForTimeout(100);
      return undefined;
    },
    8000,
    'the log to show it',
  );
}
