import t from 'tap';
import {
  dashboardMerchant,
  openPage,
  seriousViolations,
  sessionRequest,
  signInBrowser,
  startDashboardPlatform,
} from '../helpers/dashboard.ts';

// Sign-in and sign-out in real Chromium against the running platform.
const { platform } = await startDashboardPlatform(t, { services: ['commissions'] });
const base = platform.baseUrl;

t.test(
  'a wrong password fails with a message; the right one lands on the Overview; sign-out ends the session',
  async (t) => {
    const m = await dashboardMerchant(platform);
    const { page, consoleErrors } = await openPage(t);
    await page.goto(`${base}/dashboard/`);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    t.same(await seriousViolations(page), [], 'axe: the sign-in page');
    await page.getByLabel('E-mail').fill(m.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    t.equal(await page.getByRole('alert').textContent(), 'The e-mail or the password is not right');

    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    t.equal(await page.title(), 'Overview · Dashboard');
    const [cookie] = (await page.context().cookies()).filter((c) => c.name === 'dash_session');
    t.match(
      cookie,
      { httpOnly: true, sameSite: 'Strict', secure: true, path: '/' },
      'HttpOnly, SameSite=Strict, Secure',
    );
    t.equal(await page.evaluate('document.cookie'), '', 'scripts cannot read the session cookie');

    // The page reloads into the same session.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    const old = await sessionRequest(base, { cookie: cookie!.value }, 'GET', '/api/v1/affiliates');
    t.equal(old.status, 401, 'the old cookie gets 401 on the dashboard’s API');
    t.equal(old.body.error.code, 'UNAUTHORIZED');
    // The refused sign-in is a 401, which Chromium logs as a failed resource; nothing else may be logged.
    t.same(
      consoleErrors,
      ['Failed to load resource: the server responded with a status of 401 (Unauthorized)'],
      'no other console error',
    );
  },
);

t.test('signing in at 390 px wide', async (t) => {
  const m = await dashboardMerchant(platform);
  const { page } = await openPage(t, 390);
  await signInBrowser(page, base, m.email);
  t.ok(await page.getByRole('navigation', { name: 'Main' }).isVisible());
});
