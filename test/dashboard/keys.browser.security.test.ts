import t from 'tap';
import {
  dashboardMerchant,
  openPage,
  seriousViolations,
  signInBrowser,
  startDashboardPlatform,
} from '../helpers/dashboard.ts';
import { eventually } from '../helpers/platform.ts';

// Settings › API keys in real Chromium: a key made in the browser works with plain HTTP until it is revoked there.
const { platform } = await startDashboardPlatform(t, { services: ['commissions'] });
const base = platform.baseUrl;

const listAffiliates = (key: string) =>
  fetch(`${base}/api/v1/affiliates`, { headers: { authorization: `Bearer ${key}` } });

t.test(
  'a growth merchant creates a Read-only key, sees it once, uses it, revokes it; the audit log names the user',
  async (t) => {
    const m = await dashboardMerchant(platform, 'growth');
    const { page, consoleErrors } = await openPage(t);
    await signInBrowser(page, base, m.email);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    t.same(await seriousViolations(page), [], 'axe: API keys');

    await page.getByLabel('Read-only').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const value = (await page.getByTestId('new-key').textContent())!.trim();
    t.match(value, /^svc_[A-Za-z0-9_-]{43}$/, 'the value is shown');
    t.ok(await page.getByRole('button', { name: 'Copy key' }).isVisible(), 'with a copy button');

    const listed = await listAffiliates(value);
    t.equal(listed.status, 200, 'the key lists affiliates');
    const write = await fetch(`${base}/api/v1/affiliates`, {
      method: 'POST',
      headers: { authorization: `Bearer ${value}`, 'content-type': 'application/json' },
      body: '{"email":"a@example.com"}',
    });
    t.equal(write.status, 403, 'read-only: no writes');

    // Shown once: after leaving the page, only the prefix is left.
    await page.getByRole('button', { name: 'Done' }).click();
    await page.reload();
    await page.getByText(`${value.slice(0, 12)}…`).waitFor();
    const html = await page.content();
    t.notOk(html.includes(value), 'the value is not on the page any more');
    t.ok(html.includes(value.slice(0, 12)), 'its prefix is');

    const row = page.getByRole('row').filter({ hasText: value.slice(0, 12) });
    await row.getByRole('button', { name: /Revoke key/ }).click();
    await row.getByRole('button', { name: 'Confirm revoke' }).click();
    await row.getByText('Revoked').waitFor();
    const revokedAt = Date.now();
    await eventually(
      async () => ((await listAffiliates(value)).status === 401 ? true : undefined),
      3000,
      'the revoked key refused',
    );
    t.ok(Date.now() - revokedAt < 1500, 'refused within a second (KEY_CACHE_MS)');

    await row.getByRole('link').click();
    await page.getByRole('heading', { level: 1, name: 'API key' }).waitFor();
    const audit = page.getByRole('table').filter({ hasText: 'Who' });
    await audit.getByText('Revoked').waitFor();
    const rows = await audit.getByRole('row').allTextContents();
    t.equal(rows.length, 3, 'a header and two entries');
    t.match(rows[1], new RegExp(`Revoked${m.email.replace('.', '\\.')}`), 'revoked, by the user');
    t.match(rows[2], new RegExp(`Created${m.email.replace('.', '\\.')}`), 'created, by the user');
    t.ok(
      await page.getByText('Requests per day, last 30 days', { exact: true }).isVisible(),
      'the daily requests chart',
    );
    t.same(await seriousViolations(page), [], 'axe: a key’s page');
    t.same(consoleErrors, [], 'no console error');

    const stored =
      await platform.sql`select action, actor from api_key_audit where merchant_id = ${m.id} and actor <> 'operator' order by id`;
    t.same(
      stored.map((r) => [r['action'], r['actor']]),
      [
        ['created', m.email],
        ['revoked', m.email],
      ],
      'the audit rows the CLI reads',
    );
  },
);

t.test('a starter merchant is told keys need Growth and is offered no key', async (t) => {
  const m = await dashboardMerchant(platform, 'starter');
  const { page, consoleErrors } = await openPage(t, 390);
  await signInBrowser(page, base, m.email);
  await page.goto(`${base}/dashboard/settings/keys`);
  await page.getByText('API keys need the Growth plan or higher').waitFor();
  t.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0, 'no create form');
  t.same(await seriousViolations(page), [], 'axe at 390 px');
  t.same(consoleErrors, []);
  const res = (await page.evaluate(async () => {
    const { session } = (await (await fetch('/dashboard/api/session')).json()) as { session: { csrf_token: string } };
    const r = await fetch('/dashboard/api/keys', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token },
      body: '{"scopes":["read"]}',
    });
    return { status: r.status, body: await r.json() };
  })) as { status: number; body: { error: { code: string } } };
  t.equal(res.status, 402, 'the API refuses it too');
  t.equal(res.body.error.code, 'PLAN_REQUIRED');
});

t.test('another merchant’s key id in the URL shows "not found"', async (t) => {
  const owner = await dashboardMerchant(platform);
  const [key] = await platform.sql<{ id: string }[]>`select id from api_keys where merchant_id = ${owner.id}`;
  const intruder = await dashboardMerchant(platform);
  const { page } = await openPage(t);
  await signInBrowser(page, base, intruder.email);
  await page.goto(`${base}/dashboard/settings/keys/${key!.id}`);
  t.equal(await page.getByRole('alert').textContent(), 'No such key');
  t.notOk(
    (await page.content()).includes(key!.id.slice(4, 12)) && (await page.getByText('Audit log').count()) > 0,
    'no data of the key',
  );
});
