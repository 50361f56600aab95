import t from 'tap';
import { openPage, seriousViolations, startDashboardPlatform } from '../helpers/dashboard.ts';

// The newcomer's path in real Chromium, with no mail server (the development mailbox): sign up at
// /dashboard/signup, find the link at /dev/mailbox, open it, and land signed in on the Overview.
const { platform } = await startDashboardPlatform(t, { services: ['commissions', 'dispatcher'] });
const base = platform.baseUrl;

const mailbox = async () =>
  ((await (await fetch(`${base}/dev/mailbox`)).json()) as { mails: { to: string; subject: string; links: string[] }[] })
    .mails;

t.test('sign up → mail → verify → signed in', async (t) => {
  const { page, consoleErrors } = await openPage(t);
  await page.goto(`${base}/dashboard/`);
  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.getByRole('heading', { level: 1, name: 'Create an account' }).waitFor();
  t.equal(new URL(page.url()).pathname, '/dashboard/signup');
  t.equal(await page.title(), 'Create an account · Dashboard');
  t.same(await seriousViolations(page), [], 'axe: the sign-up page');

  await page.getByLabel('Company name').fill('Trailhead Gear');
  await page.getByLabel('E-mail').fill('newcomer@trailhead.example');
  await page.getByLabel('Password').fill('a long enough password');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { level: 1, name: 'Check your e-mail' }).waitFor();
  t.match(await page.getByRole('status').textContent(), 'newcomer@trailhead.example');

  let mail: { to: string; subject: string; links: string[] } | undefined;
  for (let i = 0; i < 200 && !mail; i++) {
    mail = (await mailbox()).find((m) => m.to === 'newcomer@trailhead.example');
    if (!mail) await new Promise((r) => setTimeout(r, 50));
  }
  t.equal(mail?.subject, 'Verify your e-mail address');
  // The link is on PUBLIC_BASE_URL (localhost:8080 by default); this gateway listens on a port of its own.
  const link = new URL(mail!.links[0]!);
  t.equal(link.pathname, '/dashboard/verify');
  await page.goto(`${base}${link.pathname}${link.search}`);
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  t.equal(await page.locator('header .brand').textContent(), 'Trailhead Gear');
  t.match(await page.locator('header .plan').textContent(), /free plan/);

  // The link was for once: opened again, it says so.
  const { page: again } = await openPage(t);
  await again.goto(`${base}${link.pathname}${link.search}`);
  t.match(await again.getByRole('alert').textContent(), /not valid any more/);
  t.same(await seriousViolations(again), [], 'axe: a used link');
  t.same(
    consoleErrors.filter((e) => !e.includes('status of 4')),
    [],
    'no console error',
  );
});

t.test('the sign-up page at 390 px wide', async (t) => {
  const { page } = await openPage(t, 390);
  await page.goto(`${base}/dashboard/signup`);
  await page.getByRole('heading', { level: 1, name: 'Create an account' }).waitFor();
  t.same(await seriousViolations(page), [], 'axe at 390 px');
  const overflow = await page.evaluate('document.documentElement.scrollWidth > document.documentElement.clientWidth');
  t.equal(overflow, false, 'no sideways scrolling');
});
