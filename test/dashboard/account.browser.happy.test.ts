import t from 'tap';
import {
  createDashboardUser,
  openPage,
  seriousViolations,
  signInBrowser,
  signInHttp,
  startDashboardPlatform,
} from '../helpers/dashboard.ts';

// A user's own account in real Chromium, with the development mailbox: "Forgot password?" → the mail → a new password
// and signed in; then Settings › Your account: the password changed, and signed out everywhere.
const { platform } = await startDashboardPlatform(t, { services: ['commissions', 'dispatcher'] });
const base = platform.baseUrl;
const merchant = await platform.merchant({ plan: 'growth' });
const email = `forgetful-${merchant.id}@example.com`;
await createDashboardUser(platform.sql, merchant.id, email);

const mailbox = async () =>
  ((await (await fetch(`${base}/dev/mailbox`)).json()) as { mails: { to: string; subject: string; links: string[] }[] })
    .mails;
const noOverflow = 'document.documentElement.scrollWidth <= document.documentElement.clientWidth';

t.test('forgot password → mail → new password → signed in', async (t) => {
  const { page, consoleErrors } = await openPage(t);
  await page.goto(`${base}/dashboard/`);
  await page.getByRole('link', { name: 'Forgot password?' }).click();
  await page.getByRole('heading', { level: 1, name: 'Reset your password' }).waitFor();
  t.same(await seriousViolations(page), [], 'axe: the forgot-password page');
  await page.getByLabel('E-mail').fill(email);
  await page.getByRole('button', { name: 'Send reset link' }).click();
  t.match(await page.getByRole('status').textContent(), email);

  let mail: { subject: string; links: string[] } | undefined;
  for (let i = 0; i < 200 && !mail; i++) {
    mail = (await mailbox()).find((m) => m.to === email && m.subject === 'Reset your password');
    if (!mail) await new Promise((r) => setTimeout(r, 50));
  }
  t.ok(mail, 'the mail is in the development mailbox');
  const link = new URL(mail!.links[0]!);
  t.equal(link.pathname, '/dashboard/reset');
  await page.goto(`${base}${link.pathname}${link.search}`);
  await page.getByRole('heading', { level: 1, name: 'Choose a new password' }).waitFor();
  t.same(await seriousViolations(page), [], 'axe: the reset page');
  await page.getByLabel('New password').fill('my brand new password');
  await page.getByRole('button', { name: 'Set password' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  t.equal((await signInHttp(base, email, 'my brand new password')).status, 201, 'the new password signs in');
  t.same(
    consoleErrors.filter((e) => !e.includes('status of 4')),
    [],
    'no console error',
  );
});

t.test('Settings › Your account: change the password, then sign out everywhere', async (t) => {
  const { page } = await openPage(t);
  await signInBrowser(page, base, email, 'my brand new password');
  const elsewhere = await signInHttp(base, email, 'my brand new password');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { level: 2, name: 'Your account' }).waitFor();
  await page.getByLabel('Current password').fill('my brand new password');
  await page.getByLabel('New password').fill('and another new password');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByText('Password changed. Your other sessions have ended.').waitFor();
  const other = await fetch(`${base}/dashboard/api/session`, {
    headers: { cookie: `dash_session=${elsewhere.cookie}` },
  });
  t.same(await other.json(), { session: null }, 'the other session ended');
  t.same(await seriousViolations(page), [], 'axe: Settings');

  await page.getByRole('button', { name: 'Sign out everywhere' }).click();
  await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
  t.equal((await signInHttp(base, email, 'and another new password')).status, 201);
});

t.test('the forgot and reset pages at 390 px wide', async (t) => {
  const { page } = await openPage(t, 390);
  for (const path of ['/dashboard/forgot', '/dashboard/reset?token=x']) {
    await page.goto(`${base}${path}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    t.same(await seriousViolations(page), [], `axe at 390 px: ${path}`);
    t.ok(await page.evaluate(noOverflow), `no sideways scrolling: ${path}`);
  }
});
