import t from 'tap';
import { dashboardMerchant, openPage, seriousViolations, signInBrowser } from '../helpers/dashboard.ts';
import { mailsTo, startProgrammePlatform } from './programme.ts';

// The programme page end to end in real Chromium: the merchant publishes the page in Settings, an applicant fills
// in the form, the merchant approves the application on the Affiliates page, and the approval mail with its portal
// sign-in link arrives in the development mailbox.
const platform = await startProgrammePlatform(t, { analytics: true });
const base = platform.baseUrl;

t.test('publish the page, apply in the browser, approve in the dashboard, get the sign-in link', async (t) => {
  const m = await dashboardMerchant(platform);
  await platform.sql`update merchants set name = 'Trailhead Gear' where id = ${m.id}`;
  const merchant = await openPage(t);
  await signInBrowser(merchant.page, base, m.email);
  await merchant.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await merchant.page.getByRole('heading', { level: 2, name: 'Programme page' }).waitFor();
  await merchant.page.getByText('Choose an address to publish your programme page').waitFor();
  await merchant.page.getByLabel('Page address').fill('trailhead');
  await merchant.page.getByLabel('Description').fill('Gear for every trail.');
  await merchant.page.getByRole('button', { name: 'Save page' }).click();
  await merchant.page.getByText('Programme page saved.').waitFor({ timeout: 20_000 });
  const pageUrl = await merchant.page.getByRole('link', { name: /\/p\/trailhead$/ }).textContent();
  t.match(pageUrl, /\/p\/trailhead$/);
  t.match(await merchant.page.getByRole('listitem').filter({ hasText: 'of every sale you refer' }).count(), 1);

  const applicant = await openPage(t);
  await applicant.page.goto(`${base}/p/trailhead`);
  await applicant.page.getByRole('heading', { level: 1, name: 'Trailhead Gear affiliate programme' }).waitFor();
  t.same(await seriousViolations(applicant.page), [], 'axe: the programme page');
  await applicant.page.getByLabel('Name').fill('Robin Ranger');
  await applicant.page.getByLabel('E-mail').fill('robin@ranger.example');
  await applicant.page.getByLabel('Website').fill('ranger.example');
  await applicant.page.getByLabel('How will you promote us?').fill('Trail reviews on my blog');
  await applicant.page.getByRole('checkbox').check();
  await applicant.page.getByRole('button', { name: 'Apply' }).click();
  await applicant.page.getByRole('heading', { level: 1, name: 'Thank you for applying' }).waitFor();
  t.same(applicant.consoleErrors, [], 'no console errors (the strict policy let the page through)');
  await mailsTo(platform, 'robin@ranger.example');

  await merchant.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Affiliates' }).click();
  const application = merchant.page.getByRole('listitem', { name: 'Application of Robin Ranger' });
  await application.waitFor();
  t.match(await application.textContent(), /https:\/\/ranger\.example\/.*Trail reviews on my blog/s);
  t.same(await seriousViolations(merchant.page), [], 'axe: the applications');
  await merchant.page.getByRole('button', { name: 'Approve Robin Ranger' }).click();
  await merchant.page.getByText('No applications waiting.', { exact: false }).waitFor();
  const [row] = await platform.sql`select status from affiliates where email = 'robin@ranger.example'`;
  t.equal(row!['status'], 'approved');

  const mails = await mailsTo(platform, 'robin@ranger.example', 2);
  t.match(mails[0], { subject: 'Welcome to the Trailhead Gear affiliate programme' });
  t.match(mails[0]!.links[0], new RegExp('/portal/link/[A-Za-z0-9_-]{43}$'));
  t.same(merchant.consoleErrors, []);
});
