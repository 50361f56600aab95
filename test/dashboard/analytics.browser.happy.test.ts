import { readFile } from 'node:fs/promises';
import type { Locator, Page } from 'playwright-core';
import t from 'tap';
import { csvField, toCsv } from '../../services/dashboard/src/csv.ts';
import { rangeSpan, today, zonedMidnight } from '../../services/dashboard/src/range.ts';
import { rolledUp } from '../analytics/setup.ts';
import { clickReferralLink, createAffiliate, createCoupon, setSettings } from '../events/setup.ts';
import {
  createDashboardUser,
  dashboardMerchant,
  openPage,
  overflowingElements,
  seriousViolations,
  signInBrowser,
  startDashboardPlatform,
} from '../helpers/dashboard.ts';
import { eventually } from '../helpers/platform.ts';

// The Analytics page and an affiliate's analytics in real Chromium, over clicks made through the referral link and
// events posted to the API, once the drain has rolled them up: the series and its measures, a preset range, the top
// tables, the events with their attribution, and CSV files holding what the page shows.
const { platform } = await startDashboardPlatform(t, {
  services: ['events', 'commissions'],
  env: { GEO_COUNTRY_HEADER: 'CF-IPCountry' },
});
const base = platform.baseUrl;
const m = await dashboardMerchant(platform);
await setSettings(platform.sql, m.id, { default_rate: 0.1, currency: 'USD', landing_url: 'https://shop.example.com/' });
const ann = await createAffiliate(m.client, 'ann@example.com', { display_name: 'Ann Archer', slug: 'ann' });
const bob = await createAffiliate(m.client, 'bob@example.com', { display_name: 'Bob Baker', slug: 'bob' });
await createCoupon(m.client, bob.id, 'BOB10');
const PHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const clicks: string[] = [];
for (let i = 0; i < 3; i++)
  clicks.push(
    await clickReferralLink(base, m.id, 'ann', {
      'user-agent': PHONE,
      referer: 'https://news.example.org/story',
      'cf-ipcountry': 'DE',
    }),
  );
const posted = [
  { event_type: 'purchase', external_id: 'o-cookie', amount: 100, currency: 'USD', cookie_id: clicks[0] },
  { event_type: 'purchase', external_id: 'o-coupon', amount: 50, currency: 'USD', coupon: 'BOB10' },
];
/** The events as recorded (their ids and instants, for the CSV files), by external id. */
const recorded = new Map<string, { id: string; created_at: string }>();
for (const body of posted) {
  const res = await m.client.post('/api/v1/events', body);
  if (res.status !== 201) throw new Error(`recording an event: ${res.status} ${res.text}`);
  recorded.set(body.external_id, res.body);
}
// Commissions are rolled up too: wait for both, then for the drain.
await eventually(
  async () => ((await m.client.get('/api/v1/commissions')).body.data.length === 2 ? true : undefined),
  15_000,
  'two commissions',
);
await rolledUp(platform.sql);

/** Waits until no section of the page says it is loading. */
async function loaded(page: Page): Promise<void> {
  const loading = page.getByRole('status').filter({ hasText: /^Loading/ });
  for (let waited = 0; (await loading.count()) > 0; waited += 100) {
    if (waited > 15_000) throw new Error('still loading after 15 s');
    await page.waitForTimeout(100);
  }
}

/** How many buckets the chart's table has. */
const seriesRows = (scope: Page | Locator) => scope.locator('figure.chart table.visually-hidden tbody tr').count();

/** The series as the chart's table states it: one [day, value] per bucket. */
const seriesCells = (scope: Page | Locator) =>
  scope
    .locator('figure.chart table.visually-hidden tbody tr')
    .evaluateAll((rows) =>
      rows.map((r) => [r.querySelector('th')?.textContent ?? '', r.querySelector('td')?.textContent ?? '']),
    );

/** Waits for the chart to show `measure` (its caption starts with it). */
const shownMeasure = (scope: Page | Locator, measure: string) =>
  scope
    .locator('figure.chart figcaption')
    .filter({ hasText: new RegExp(`^${measure}`) })
    .waitFor();

/** The sum of the chart's shown measure (money read back from its formatting). */
const seriesTotal = async (scope: Page | Locator) =>
  (await seriesCells(scope)).reduce((sum, [, v]) => sum + Number(v!.replace(/[^0-9.-]/g, '')), 0);

/** The rows of the CSV file that pressing `button` downloads (no field of these files is quoted). */
async function csvRows(page: Page, button: Locator): Promise<string[][]> {
  const downloading = page.waitForEvent('download');
  await button.click();
  const text = await readFile(await (await downloading).path(), 'utf8');
  t.ok(text.endsWith('\r\n'), 'CRLF line ends');
  return text
    .trimEnd()
    .split('\r\n')
    .map((l) => l.split(','));
}

t.test('the CSV fields: quoted when needed, formulas defused, numbers as they are', async (t) => {
  t.equal(csvField('plain'), 'plain');
  t.equal(csvField('a,b'), '"a,b"');
  t.equal(csvField('say "hi"'), '"say ""hi"""');
  t.equal(csvField('two\nlines'), '"two\nlines"');
  t.equal(csvField('=HYPERLINK("x")'), `"'=HYPERLINK(""x"")"`, 'a formula starts with an apostrophe');
  t.equal(csvField('@SUM(A1)'), "'@SUM(A1)");
  t.equal(csvField('-12.50'), '-12.50', 'a negative decimal stays a number');
  t.equal(csvField('-1+1'), "'-1+1");
  t.equal(csvField(-3), '-3');
  t.equal(csvField('x;=1+1'), `"x;'=1+1"`, 'a formula after a semicolon, where a locale splits cells on it');
  t.equal(csvField('a\t@SUM(A1)'), `"a\t'@SUM(A1)"`, 'or after a tab');
  t.equal(csvField('a;b'), '"a;b"', 'a semicolon keeps its field quoted');
  t.equal(csvField(null), '');
  t.equal(toCsv(['a', 'b'], [[1, 'x,y']]), 'a,b\r\n1,"x,y"\r\n');
});

t.test("a range's instants: days of the zone, across DST changes and odd offsets", async (t) => {
  const at = (day: string, zone: string) => new Date(zonedMidnight(day, zone)).toISOString();
  t.equal(at('2026-10-25', 'Europe/Paris'), '2026-10-24T22:00:00.000Z', 'summer time at midnight');
  t.equal(at('2026-10-26', 'Europe/Paris'), '2026-10-25T23:00:00.000Z', 'winter time the day after the change');
  t.equal(at('2026-03-29', 'Europe/Paris'), '2026-03-28T23:00:00.000Z', 'the spring change falls after midnight');
  t.equal(at('2026-10-26', 'Asia/Kolkata'), '2026-10-25T18:30:00.000Z', 'a half-hour offset');
  t.equal(at('2026-10-26', 'Asia/Kathmandu'), '2026-10-25T18:15:00.000Z', 'a 45-minute offset');
  t.same(
    rangeSpan({ preset: 'custom', timezone: 'Europe/Paris', from: '2026-10-24', to: '2026-10-26' }, 0),
    { start: '2026-10-23T22:00:00.000Z', end: '2026-10-26T23:00:00.000Z', timezone: 'Europe/Paris' },
    'custom days: from the first midnight to the one after the last day',
  );
  const now = Date.parse('2026-12-01T03:00:00Z');
  t.equal(today('America/Los_Angeles', now), '2026-11-30', 'still November there');
  t.same(
    rangeSpan({ preset: 'month', timezone: 'America/Los_Angeles', from: '', to: '' }, now),
    { start: '2026-11-01T07:00:00.000Z', end: '2026-12-01T03:00:00.000Z', timezone: 'America/Los_Angeles' },
    'this month in the zone, up to now',
  );
  t.equal(
    rangeSpan({ preset: '7', timezone: 'UTC', from: '', to: '' }, now).start,
    '2026-11-24T03:00:00.000Z',
    'the last 7 days up to now',
  );
});

t.test('the Analytics page at 1280 px: series, measures, range, top tables, events, CSV', async (t) => {
  const { page, consoleErrors } = await openPage(t, 1280);
  await signInBrowser(page, base, m.email);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Analytics' }).click();
  await page.getByRole('heading', { level: 1, name: 'Analytics' }).waitFor();
  await loaded(page);
  const zone = await page.getByRole('combobox', { name: /^Time zone/ }).inputValue();
  t.equal(zone, await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone'), "the browser's zone");

  t.equal(await page.locator('figure.chart canvas').count(), 1, 'the chart is drawn');
  t.equal(await seriesRows(page), 31, 'the last 30 days: 31 days of the zone touched');
  t.equal(await seriesTotal(page), 3, 'three clicks');
  const expected: [string, number][] = [
    ['Conversions', 2],
    ['Revenue', 150],
    ['Commissions', 15],
  ];
  for (const [measure, total] of expected) {
    await page.getByRole('radio', { name: measure }).check();
    await shownMeasure(page, measure);
    t.equal(await seriesTotal(page), total, `${measure} over the range`);
  }

  await page.getByRole('combobox', { name: /^Range/ }).selectOption({ label: 'Last 7 days' });
  await eventually(async () => ((await seriesRows(page)) === 8 ? true : undefined), 5000, 'eight days');
  t.equal(await seriesTotal(page), 15, 'the same commissions over 7 days');

  // A custom range: three days of the zone, today the last.
  const last = today(zone, Date.now());
  const first = new Date(Date.parse(`${last}T00:00:00Z`) - 2 * 86_400_000).toISOString().slice(0, 10);
  await page.getByRole('combobox', { name: /^Range/ }).selectOption({ label: 'Custom' });
  await page.getByLabel('From').fill(first);
  await page.getByLabel('To', { exact: true }).fill(last);
  await eventually(async () => ((await seriesRows(page)) === 3 ? true : undefined), 5000, 'three days');
  t.equal((await seriesCells(page))[2]![0], last, 'ending today');
  t.equal(await seriesTotal(page), 15, 'the commissions, made today');

  // The series' CSV: the four measures by day, the shown one equal to the chart's.
  await page.getByRole('radio', { name: 'Clicks' }).check();
  await shownMeasure(page, 'Clicks');
  const shown = await seriesCells(page);
  const series = await csvRows(page, page.getByRole('button', { name: 'Download the series (CSV)' }));
  t.same(series[0], ['Day', 'Clicks', 'Conversions', 'Revenue (USD)', 'Commissions (USD)']);
  t.same(
    series.slice(1).map((r) => [r[0], r[1]]),
    shown,
    'each day and its clicks as the chart states them',
  );
  t.same(
    series
      .slice(1)
      .reduce((s, r) => s.map((v, i) => v + Number(r[i + 1])), [0, 0, 0, 0])
      .map((v) => Math.round(v * 100) / 100),
    [3, 2, 150, 15],
    'all four measures',
  );

  // Top tables: one conversion each, ties in key order (Ann was made first), "none" last.
  const affiliates = page.getByRole('region', { name: 'Top affiliates' });
  const rows = async (region: Locator) =>
    region.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent ?? '')));
  const annRow = ['3', '1', '$100.00', '$10.00'];
  const bobRow = ['0', '1', '$50.00', '$5.00'];
  t.same(await rows(affiliates), [
    ['Ann Archer', ...annRow],
    ['Bob Baker', ...bobRow],
  ]);
  t.same(await rows(page.getByRole('region', { name: 'Top coupons' })), [
    ['BOB10', ...bobRow],
    ['None', '0', '1', '$100.00', '$10.00'],
  ]);
  // The click dimensions: Ann's clicks and her event have them; Bob's coupon event has none.
  const clickDimensions: [string, string][] = [
    ['Top countries', 'DE'],
    ['Top referrers', 'news.example.org'],
    ['Top landing pages', 'https://shop.example.com/'],
    ['Devices', 'mobile'],
  ];
  for (const [region, value] of clickDimensions)
    t.same(
      await rows(page.getByRole('region', { name: region })),
      [
        [value, ...annRow],
        ['None', ...bobRow],
      ],
      region,
    );
  const top = await csvRows(page, affiliates.getByRole('button', { name: 'Download CSV of top affiliates' }));
  t.same(top, [
    ['Affiliate id', 'Affiliate', 'Clicks', 'Conversions', 'Revenue (USD)', 'Commissions (USD)'],
    [ann.id, 'Ann Archer', '3', '1', '100.00', '10.00'],
    [bob.id, 'Bob Baker', '0', '1', '50.00', '5.00'],
  ]);

  // The events, newest first, with their attribution.
  const events = await rows(page.getByRole('region', { name: 'Conversion events' }));
  t.same(
    events.map((e) => e.slice(0, 6)),
    [
      ['purchase o-coupon', '$50.00', bob.id, 'Coupon', '—', 'BOB10'],
      ['purchase o-cookie', '$100.00', ann.id, 'Cookie', clicks[0], '—'],
    ],
  );

  // The events' CSV: the page shown, its joined columns apart, the attribution and the recorded instants.
  const eventsHeader = [
    'Event id',
    'Event type',
    'External id',
    'Amount',
    'Currency',
    'Affiliate id',
    'Attribution',
    'Click',
    'Coupon',
    'Recorded',
  ];
  const cookieLine = (e: { id: string; created_at: string }) => [
    e.id,
    'purchase',
    'o-cookie',
    '100',
    'USD',
    ann.id,
    'Cookie',
    clicks[0]!,
    '',
    e.created_at,
  ];
  const couponCsv = recorded.get('o-coupon')!;
  const cookieCsv = recorded.get('o-cookie')!;
  t.same(
    await csvRows(
      page,
      page
        .getByRole('region', { name: 'Conversion events' })
        .getByRole('button', { name: 'Download CSV of the events' }),
    ),
    [
      eventsHeader,
      [couponCsv.id, 'purchase', 'o-coupon', '50', 'USD', bob.id, 'Coupon', '', 'BOB10', couponCsv.created_at],
      cookieLine(cookieCsv),
    ],
    'each event shown, newest first',
  );

  t.same(await seriousViolations(page), [], 'axe: Analytics at 1280 px');
  await affiliates.getByRole('link', { name: 'Ann Archer' }).click();
  await page.getByRole('heading', { level: 2, name: 'Ann Archer' }).waitFor();
  t.ok(page.url().endsWith(`/dashboard/affiliates/${ann.id}`), "the affiliate's page");
  await loaded(page);
  const own = page.getByRole('region', { name: 'Analytics' });
  t.equal(await seriesTotal(own), 3, 'her clicks');
  await own.getByRole('radio', { name: 'Revenue' }).check();
  await shownMeasure(own, 'Revenue');
  t.equal(await seriesTotal(own), 100, 'her revenue, not Bob’s');
  t.same(
    (await rows(own.getByRole('region', { name: 'Conversion events' }))).map((e) => e.slice(0, 6)),
    [['purchase o-cookie', '$100.00', ann.id, 'Cookie', clicks[0], '—']],
    'her events only',
  );
  t.same(
    await csvRows(page, own.getByRole('button', { name: 'Download CSV of the events' })),
    [eventsHeader, cookieLine(cookieCsv)],
    'her events as a file',
  );
  // Her top tables: her traffic only (Bob's coupon event is not hers); no affiliates' table, it would be hers alone.
  t.equal(await own.getByRole('region', { name: 'Top affiliates' }).count(), 0, 'no top affiliates');
  t.same(
    await rows(own.getByRole('region', { name: 'Top coupons' })),
    [['None', '0', '1', '$100.00', '$10.00']],
    'her coupons: none (coupons have no clicks)',
  );
  const herTops: [string, string][] = [
    ['Top countries', 'DE'],
    ['Top referrers', 'news.example.org'],
    ['Top landing pages', 'https://shop.example.com/'],
    ['Devices', 'mobile'],
  ];
  for (const [region, value] of herTops)
    t.same(await rows(own.getByRole('region', { name: region })), [[value, ...annRow]], `her ${region.toLowerCase()}`);
  const countries = own.getByRole('region', { name: 'Top countries' });
  t.same(
    await csvRows(page, countries.getByRole('button', { name: 'Download CSV of top countries' })),
    [
      ['Country', 'Clicks', 'Conversions', 'Revenue (USD)', 'Commissions (USD)'],
      ['DE', '3', '1', '100.00', '10.00'],
    ],
    'her countries as a file',
  );
  t.same(await seriousViolations(page), [], 'axe: the affiliate at 1280 px');
  await own.getByRole('combobox', { name: /^Range/ }).selectOption({ label: 'Custom' });
  const yesterday = new Date(Date.parse(`${last}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  await own.getByLabel('From').fill(first);
  await own.getByLabel('To', { exact: true }).fill(yesterday);
  await countries.getByText('Nothing in this range.').waitFor();
  t.pass('her top tables follow the range');
  t.same(
    consoleErrors.filter((e) => !e.startsWith('Failed to load resource')),
    [],
    'no script errors',
  );
});

t.test('at 390 px, as a viewer: the pages read, axe passes, nothing scrolls sideways', async (t) => {
  const viewer = `viewer-${m.id}@example.com`;
  await createDashboardUser(platform.sql, m.id, viewer);
  await platform.sql`update dashboard_users set role = 'viewer' where lower(email) = lower(${viewer})`;
  const { page } = await openPage(t, 390);
  await signInBrowser(page, base, viewer);
  for (const [path, title] of [
    ['/analytics', 'Analytics'],
    [`/affiliates/${ann.id}`, 'Affiliate'],
  ] as const) {
    await page.goto(`${base}/dashboard${path}`);
    await page.getByRole('heading', { level: 1, name: title, exact: true }).waitFor();
    await page.locator('figure.chart').first().waitFor();
    await loaded(page);
    t.equal(await page.getByRole('alert').count(), 0, `${path}: a viewer reads it all`);
    t.equal(await seriesTotal(page), 3, `${path}: the clicks`);
    t.equal(
      await page.getByRole('region', { name: 'Top countries' }).locator('tbody tr').count(),
      path === '/analytics' ? 2 : 1,
      `${path}: the top countries (Bob's event has none; on Ann's page, only hers)`,
    );
    t.same(await overflowingElements(page), [], `${path}: nothing wider than 390 px`);
    t.equal(
      await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth'),
      0,
      `${path}: the document does not scroll sideways`,
    );
    t.same(await seriousViolations(page), [], `${path}: axe at 390 px`);
  }
});
