import t from 'tap';
import { rolledUp } from '../analytics/setup.ts';
import { createCoupon } from '../events/setup.ts';
import { awaitProcessed, conversion, recordConversions } from '../helpers/commissions.ts';
import { openPage, overflowingElements, seriousViolations } from '../helpers/dashboard.ts';
import { eventually } from '../helpers/platform.ts';
import {
  approvedAffiliate,
  loaded,
  mailedLink,
  openMailedLink,
  mailsTo,
  portalMerchant,
  signInPortal,
  startPortalPlatform,
} from './pages-setup.ts';

// Every portal page at 1280 and 390 px in real Chromium: axe finds nothing serious, nothing makes the page scroll
// sideways (tables scroll inside their box); and the programme switcher of an address in two programmes.
const { platform } = await startPortalPlatform(t);
const base = platform.baseUrl;
const first = await portalMerchant(platform);
const second = await portalMerchant(platform);
await platform.sql`update merchants set name = 'Second Shop' where id = ${second.id}`;
const email = 'cy.long.address.for.narrow.screens@example.com';
const cy = await approvedAffiliate(first.client, email, { display_name: 'Cy Chen', slug: 'cy-chen' });
const cy2 = await approvedAffiliate(second.client, email, { display_name: 'Cy Chen', slug: 'cy-two' });
await createCoupon(first.client, cy.id, 'CY-COUPON');
// A few commissions, so that the Commissions table has rows to fit (or scroll) at 390 px.
for (let i = 0; i < 3; i++) {
  const res = await first.client.post('/api/v1/events', {
    event_type: 'purchase',
    external_id: `a-rather-long-order-reference-${i}-0000000000`,
    amount: 250 + i,
    currency: 'USD',
    coupon: 'CY-COUPON',
  });
  if (res.status !== 201) throw new Error(`event: ${res.status} ${res.text}`);
}
await eventually(
  async () => ((await first.client.get('/api/v1/commissions')).body.data.length === 3 ? true : undefined),
  15_000,
  'three commissions',
);
// And more straight through the commissions pipeline: 28 in all, two pages of Commissions.
const more = Array.from({ length: 25 }, () => conversion({ affiliate_id: cy.id, amount: '40.00' }));
await recordConversions(platform.sql, first.id, more);
await awaitProcessed(
  platform.sql,
  first.id,
  more.map((c) => c.event_id),
);
await rolledUp(platform.sql);

const PAGES = [
  ['/', 'Home'],
  ['/performance', 'Performance'],
  ['/commissions', 'Commissions'],
  ['/payouts', 'Payouts'],
  ['/payout-settings', 'Payout settings'],
  ['/team', 'Team'],
] as const;

for (const width of [1280, 390]) {
  t.test(`every page at ${width} px: axe, and nothing scrolls sideways`, async (t) => {
    const { page, consoleErrors } = await openPage(t, width);
    await page.goto(`${base}/portal/sign-in`);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    t.same(await seriousViolations(page), [], `axe: Sign in at ${width} px`);
    const before = (await mailsTo(base, email)).length;
    await page.getByLabel('E-mail').fill(email);
    await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
    await page.getByRole('heading', { level: 1, name: 'Check your e-mail' }).waitFor();
    t.same(await seriousViolations(page), [], `axe: Check your e-mail at ${width} px`);
    await openMailedLink(page, base, await mailedLink(base, email, /sign-in link/, before + 1));
    await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
    for (const [path, title] of PAGES) {
      await page.goto(`${base}/portal${path === '/' ? '/' : path}`);
      await page.getByRole('heading', { level: 1, name: title, exact: true }).waitFor();
      await loaded(page);
      if (path === '/performance') await page.locator('figure.chart').waitFor();
      t.equal(await page.getByRole('alert').count(), 0, `${title}: no error`);
      t.same(await overflowingElements(page), [], `${title}: nothing wider than ${width} px`);
      t.equal(
        await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth'),
        0,
        `${title}: the document does not scroll sideways`,
      );
      t.same(await seriousViolations(page), [], `axe: ${title} at ${width} px`);
    }
    // Payout settings with its two forms, after the fresh link.
    await page.goto(`${base}/portal/payout-settings`);
    await page.getByRole('button', { name: 'Send me a link to change them' }).click();
    await page.getByText('Check your e-mail').waitFor();
    await openMailedLink(page, base, await mailedLink(base, email, /payout details/i, before + 2));
    await page.getByRole('button', { name: 'Save payout details' }).waitFor();
    await page.getByLabel('Paid by').selectOption('bank');
    await page.getByLabel('IBAN').waitFor();
    t.same(await overflowingElements(page), [], `the forms: nothing wider than ${width} px`);
    t.same(await seriousViolations(page), [], `axe: Payout settings with its forms at ${width} px`);
    t.same(
      consoleErrors.filter((e) => !e.startsWith('Failed to load resource')),
      [],
      'no script errors',
    );
  });
}

t.test('an address in two programmes switches between them', async (t) => {
  const { page } = await openPage(t);
  const before = (await mailsTo(base, email)).length;
  await signInPortal(page, base, email, before);
  const switcher = page.getByLabel('Programme');
  const brand = page.locator('header .brand');
  const firstName = (await brand.textContent())!;
  t.same(
    (await switcher.locator('option').allTextContents()).sort(),
    [firstName, 'Second Shop'].sort(),
    'both programmes offered',
  );
  const commissionRows = page.locator('tbody tr');
  const switchTo = async (affiliateId: string, name: RegExp) => {
    await switcher.selectOption(affiliateId);
    await eventually(async () => (name.test((await brand.textContent())!) ? true : undefined), 5000, 'switched');
    await page.getByRole('link', { name: 'Commissions', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Commissions' }).waitFor();
    await loaded(page);
  };
  if (firstName !== 'Second Shop') {
    await switchTo(cy2.id, /^Second Shop$/);
    await page.getByText('No commission yet.').waitFor();
    t.pass("the second programme's commissions: none");
  }
  await switchTo(cy.id, /^(?!Second Shop$)/);
  await commissionRows.first().waitFor();
  t.equal(await commissionRows.count(), 25, "the first programme's commissions: a first page of 25");
  await page.getByRole('button', { name: 'Next' }).click();
  await page.getByText('Page 2').waitFor();
  // The first page stays on screen until the second has come.
  await eventually(async () => ((await commissionRows.count()) === 3 ? true : undefined), 5000, 'the second page');
  t.pass('and the last 3 on the second page');
});
