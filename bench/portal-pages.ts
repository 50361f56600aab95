import { chromium } from 'playwright-core';
import { loadAnalytics } from './analytics-seed.ts';
import { intEnv } from './context.ts';
import { hasChromium, loadCells, loadVerdict, timePageLoads } from './page-loads.ts';
import { table } from './report.ts';
import { awaitProcessed, conversion, recordConversions } from '../test/helpers/commissions.ts';
import { approvedAffiliate, portalMerchant, signInPortal, startPortalPlatform } from '../test/portal/pages-setup.ts';

/**
 * The affiliate portal's pages for an affiliate with BENCH_PORTAL_CLICKS clicks (100,000) and BENCH_PORTAL_EVENTS
 * conversion events (5,000) over two years (bench/analytics-seed.ts's load, this affiliate its merchant's only one),
 * BENCH_PORTAL_COMMISSIONS commissions made by the commissions service (1,000) and a payout: BENCH_DASHBOARD_LOADS
 * fresh loads of each page (20) in Chromium at 1280 px, from the navigation until its data is on screen. Target:
 * p95 ≤ 1 s. Runs on its own (not a part of `npm run bench`): `node bench/portal-pages.ts`, on the test platform
 * (a database and NATS prefix of its own on TEST_DATABASE_URL / NATS_URL, the services in this process).
 */
const teardowns: (() => unknown)[] = [];
const t = { teardown: (fn: () => unknown) => void teardowns.unshift(fn) };
const log = (line: string) => process.stderr.write(`portal-pages: ${line}\n`);

async function main(): Promise<void> {
  if (!hasChromium()) throw new Error('/usr/bin/chromium is missing');
  const clicks = intEnv('BENCH_PORTAL_CLICKS', 100_000, 1);
  const events = intEnv('BENCH_PORTAL_EVENTS', 5_000, 1);
  const made = intEnv('BENCH_PORTAL_COMMISSIONS', 1_000, 1);
  const loads = intEnv('BENCH_DASHBOARD_LOADS', 20, 1);
  const { platform, commissions } = await startPortalPlatform(t);
  const m = await portalMerchant(platform);
  const email = 'bench.affiliate@example.com';
  const a = await approvedAffiliate(m.client, email, { display_name: 'Bench Affiliate', slug: 'bench' });
  await loadAnalytics(platform.sql, m.id, { clicks, conversions: events, log });
  for (let done = 0; done < made; done += 250) {
    const batch = Array.from({ length: Math.min(250, made - done) }, () => conversion({ affiliate_id: a.id }));
    await recordConversions(platform.sql, m.id, batch);
    await awaitProcessed(
      platform.sql,
      m.id,
      batch.map((c) => c.event_id),
    );
  }
  await commissions.approveEndedHolds();
  const payouts = await m.client.post('/api/v1/payouts');
  if (payouts.status !== 201) throw new Error(`POST /api/v1/payouts: ${payouts.status} ${payouts.text}`);
  log(`seeded: ${clicks} clicks, ${events} events, ${made} commissions, ${payouts.body.data.length} payout(s)`);

  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  t.teardown(() => browser.close());
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await signInPortal(page, platform.baseUrl, email);
  const pages: [string, string][] = [
    ['Home', '/'],
    ['Performance', '/performance'],
    ['Commissions', '/commissions'],
    ['Payouts', '/payouts'],
    ['Payout settings', '/payout-settings'],
    ['Team', '/team'],
  ];
  const rows: string[][] = [];
  const verdicts: string[] = [];
  for (const [title, path] of pages) {
    const loaded = await timePageLoads(page, `${platform.baseUrl}/portal${path}`, title, loads);
    log(`${title}: p50 ${loaded.p50.toFixed(0)} ms, p95 ${loaded.p95.toFixed(0)} ms`);
    rows.push([title, ...loadCells(loaded)]);
    const v = loadVerdict(`portal ${title}`, loads, loaded);
    verdicts.push(`${v.pass ? 'PASS' : 'MISS'} ${v.target.replace(/^dashboard /, '')}: ${v.measured}`);
  }
  process.stdout.write(
    [
      `Portal pages, an affiliate with ${clicks} clicks, ${events} events and ${made} commissions; ${loads} fresh loads each in Chromium (1280 px):`,
      '',
      table(['page', 'first load ms', 'p50 ms', 'p95 ms', 'max ms'], rows, ['l', 'r', 'r', 'r', 'r']),
      '',
      ...verdicts,
      '',
    ].join('\n'),
  );
}

try {
  await main();
} finally {
  for (const fn of teardowns) await Promise.resolve(fn()).catch(() => {});
}
