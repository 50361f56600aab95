import t from 'tap';
import {
  dashboardMerchant,
  openPage,
  seriousViolations,
  signInBrowser,
  startDashboardPlatform,
} from '../helpers/dashboard.ts';
import { invitationToken, waitForMails } from '../helpers/invitations.ts';

// Settings → Team in real Chromium, with the development mailbox: an owner invites a viewer, the mail's link is
// opened in another browser, the invitee chooses a password and lands signed in as a viewer, whose API keys page
// offers no form to create a key, and whom the gateway refuses (403) when asked anyway.
const { platform } = await startDashboardPlatform(t, { services: ['events', 'commissions', 'dispatcher'] });
const base = platform.baseUrl;

t.test('invite → mail → accept → signed in as a viewer who cannot create a key', async (t) => {
  const m = await dashboardMerchant(platform, 'growth');
  const { page, consoleErrors } = await openPage(t);
  await signInBrowser(page, base, m.email);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { level: 2, name: 'Invitations' }).waitFor();
  const email = `viewer-${m.id}@example.com`;
  await page.getByLabel('Invitee’s e-mail').fill(email);
  await page.getByLabel('Invitee’s role').selectOption('viewer');
  await page.getByRole('button', { name: 'Send invitation' }).click();
  await page.getByText(`Invitation sent to ${email}.`).waitFor();
  await page.getByRole('list', { name: 'Open invitations' }).getByText(email).waitFor();
  t.same(await seriousViolations(page), [], 'axe: Settings with an open invitation');

  const [mail] = await waitForMails(base, email);
  const link = new URL(mail!.links[0]!);
  t.equal(link.pathname, '/dashboard/accept');
  t.equal(link.searchParams.get('token'), invitationToken(mail!));

  // The invitee, in a browser of their own. The link is on PUBLIC_BASE_URL; this gateway listens on its own port.
  const invitee = await openPage(t);
  await invitee.page.goto(`${base}${link.pathname}${link.search}`);
  await invitee.page.getByRole('heading', { level: 1, name: 'Accept your invitation' }).waitFor();
  t.equal(await invitee.page.title(), 'Accept your invitation · Dashboard');
  await invitee.page.getByText(`you will sign in with it and ${email}`).waitFor();
  t.match(await invitee.page.locator('main p').first().textContent(), /^Join .+ as viewer\./);
  t.same(await seriousViolations(invitee.page), [], 'axe: the accept page');
  await invitee.page.getByLabel('Password').fill('the viewer’s own password');
  await invitee.page.getByRole('button', { name: 'Accept invitation' }).click();
  await invitee.page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  t.equal(await invitee.page.locator('header .who').textContent(), email, 'signed in as the invitee');

  await invitee.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
  await invitee.page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
  await invitee.page.getByText('Your role (viewer) reads the keys').waitFor();
  t.equal(await invitee.page.getByRole('heading', { name: 'Create a key' }).count(), 0, 'no form to create a key');
  t.equal(await invitee.page.getByRole('button', { name: 'Create key' }).count(), 0);
  // Asked anyway, with the session's own cookie and CSRF token, the gateway refuses.
  const refused = await invitee.page.evaluate<{
    status: number;
    body: { error: { code: string; message: string } };
  }>(`(async () => {
    const { session } = await (await fetch('/dashboard/api/session')).json();
    const res = await fetch('/dashboard/api/keys', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token },
      body: JSON.stringify({ scopes: ['read'] }),
    });
    return { status: res.status, body: await res.json() };
  })()`);
  t.equal(refused.status, 403);
  t.match(refused.body.error, { code: 'FORBIDDEN', message: /Your role \(viewer\) may not/ });

  // The owner sees the invitation gone and the new member in the team.
  await page.reload();
  await page.getByText('No open invitations.').waitFor();
  await page.getByRole('combobox', { name: `Role of ${email}` }).waitFor();
  t.same(
    [...consoleErrors, ...invitee.consoleErrors].filter((e) => !e.includes('status of 4')),
    [],
    'no console error',
  );
});

t.test('the accept page fits 390 px; a used link says so at once', async (t) => {
  const m = await dashboardMerchant(platform, 'growth');
  const owner = await openPage(t);
  await signInBrowser(owner.page, base, m.email);
  await owner.page.goto(`${base}/dashboard/settings`);
  const email = `twice-${m.id}@example.com`;
  await owner.page.getByLabel('Invitee’s e-mail').fill(email);
  await owner.page.getByRole('button', { name: 'Send invitation' }).click();
  const [mail] = await waitForMails(base, email);
  const link = new URL(mail!.links[0]!);

  const { page } = await openPage(t, 390);
  await page.goto(`${base}${link.pathname}${link.search}`);
  await page.getByRole('heading', { level: 1, name: 'Accept your invitation' }).waitFor();
  t.same(await seriousViolations(page), [], 'axe at 390 px');
  const overflow = await page.evaluate('document.documentElement.scrollWidth > document.documentElement.clientWidth');
  t.equal(overflow, false, 'no sideways scrolling');
  await page.getByLabel('Password').fill('a long enough password');
  await page.getByRole('button', { name: 'Accept invitation' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

  // Opened again, the used link says so at once: no password asked for.
  const again = await openPage(t);
  await again.page.goto(`${base}${link.pathname}${link.search}`);
  t.match(await again.page.getByRole('alert').textContent(), /accepted already/);
  t.equal(await again.page.getByLabel('Password').count(), 0);
  t.same(await seriousViolations(again.page), [], 'axe: a used link');
});
