import { createUser } from '../scripts/admin/commands.ts';
import { intEnv, type BenchContext } from './context.ts';
import { hasChromium, loadCells, loadVerdict, signedInPage, timePageLoads } from './page-loads.ts';
import { table, type Verdict } from './report.ts';

/**
 * The dashboard's Analytics page, and the affiliate's page with its series and events, at the analytics part's size
 * (bench/analytics.ts calls this after its seed and its recording rounds): BENCH_DASHBOARD_LOADS fresh loads of each
 * (20) in Chromium, from the navigation until every section's data is on screen (the Analytics page: the 30-day
 * series, six top tables and the first page of events). Target: p95 ≤ 1 s.
 */
const PASSWORD = 'bench analytics password';

export async function timeAnalyticsPages(ctx: BenchContext): Promise<{ section: string; verdicts: Verdict[] }> {
  if (!hasChromium()) {
    ctx.log('analytics: /usr/bin/chromium is missing; the Analytics page is not measured');
    return { section: 'Analytics page: not measured (no /usr/bin/chromium).', verdicts: [] };
  }
  const loads = intEnv('BENCH_DASHBOARD_LOADS', 20, 1);
  // The affiliate's page reads the affiliate, its payout details and its children from the affiliates service.
  await ctx.service('affiliates');
  const top = await fetch(`${ctx.gatewayUrl}/api/v1/analytics?group_by=affiliate&limit=1`, {
    headers: { authorization: `Bearer ${ctx.keys[0]}` },
  });
  if (top.status !== 200) throw new Error(`GET /api/v1/analytics answered ${top.status}: ${await top.text()}`);
  const affiliateId = ((await top.json()) as { data: { key: string }[] }).data[0]?.key;
  if (!affiliateId) throw new Error('the seeded merchant has no affiliate with analytics in the last 30 days');
  const email = `analytics-${ctx.runId}@bench.example.com`;
  await createUser(ctx.sql, ctx.merchantId, email, PASSWORD);

  const pages: [string, string, string][] = [
    ['Analytics', 'Analytics', '/analytics'],
    ["Affiliate (the top one's series and events)", 'Affiliate', `/affiliates/${affiliateId}`],
  ];
  const rows: string[][] = [];
  const verdicts: Verdict[] = [];
  const { page, close } = await signedInPage(ctx.gatewayUrl, email, PASSWORD);
  try {
    for (const [name, title, path] of pages) {
      const loaded = await timePageLoads(page, `${ctx.gatewayUrl}/dashboard${path}`, title, loads);
      ctx.log(`analytics: ${name} page: p50 ${loaded.p50.toFixed(0)} ms, p95 ${loaded.p95.toFixed(0)} ms`);
      rows.push([name, ...loadCells(loaded)]);
      verdicts.push(loadVerdict(name, loads, loaded));
    }
  } finally {
    await close();
  }
  const section = [
    `Dashboard pages over this merchant's analytics (last 30 days), ${loads} fresh loads each in Chromium (1280 px), from navigation to every section's data on screen:`,
    '',
    table(['page', 'first load ms', 'p50 ms', 'p95 ms', 'max ms'], rows, ['l', 'r', 'r', 'r', 'r']),
  ].join('\n');
  return { section, verdicts };
}
