import { createUser } from '../scripts/admin/commands.ts';
import { ascending, intEnv, percentile, type BenchContext } from './context.ts';
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
  const requests = await timePageRequests(ctx, Math.min(loads, 10));
  const section = [
    `Dashboard pages over this merchant's analytics (last 30 days), ${loads} fresh loads each in Chromium (1280 px), from navigation to every section's data on screen:`,
    '',
    table(['page', 'first load ms', 'p50 ms', 'p95 ms', 'max ms'], rows, ['l', 'r', 'r', 'r', 'r']),
    '',
    `The Analytics page's eight requests through the gateway, ${requests.rounds} rounds: each alone (one after another), and all at once as the page sends them:`,
    '',
    table(['request', 'alone p50 ms', 'at once p50 ms'], requests.rows, ['l', 'r', 'r']),
  ].join('\n');
  return { section, verdicts };
}

/** The Analytics page's requests (bench-side copies of what services/dashboard/src/pages/analytics.tsx asks). */
function pageRequests(): [string, string][] {
  const end = new Date().toISOString();
  const start = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10) + 'T00:00:00.000Z';
  const range = `start=${encodeURIComponent(start)}&end=${encodeURIComponent(end)}&timezone=UTC`;
  const tops = ['affiliate', 'coupon', 'country', 'referrer', 'landing_page', 'device'];
  return [
    ['series by day', `/api/v1/analytics?${range}&group_by=day`],
    ...tops.map((d): [string, string] => [`top 10 by ${d}`, `/api/v1/analytics?${range}&group_by=${d}&limit=10`]),
    [
      'events, first page',
      `/api/v1/events?created_after=${encodeURIComponent(start)}&created_before=${encodeURIComponent(end)}&limit=25`,
    ],
  ];
}

/**
 * Which of the page's requests its ready time waits for: `rounds` of each alone, one after another, then `rounds`
 * of all eight at once (each request's own time within the round), p50 of each.
 */
async function timePageRequests(ctx: BenchContext, rounds: number): Promise<{ rounds: number; rows: string[][] }> {
  const requests = pageRequests();
  const timed = async (path: string) => {
    const started = performance.now();
    const res = await fetch(`${ctx.gatewayUrl}${path}`, { headers: { authorization: `Bearer ${ctx.keys[0]}` } });
    await res.arrayBuffer();
    const took = performance.now() - started;
    return res.status === 200 ? took : Infinity; // a failed answer (a statement timeout's 503) shows as ∞
  };
  const alone = requests.map(() => [] as number[]);
  const atOnce = requests.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) for (const [i, [, path]] of requests.entries()) alone[i]!.push(await timed(path));
  for (let r = 0; r < rounds; r++) {
    const took = await Promise.all(requests.map(([, path]) => timed(path)));
    took.forEach((ms, i) => atOnce[i]!.push(ms));
  }
  const p50 = (v: number[]) => percentile(ascending(v), 50).toFixed(0);
  const rows = requests.map(([name], i) => [name, p50(alone[i]!), p50(atOnce[i]!)]);
  for (const row of rows) ctx.log(`analytics: page request ${row[0]}: alone ${row[1]} ms, at once ${row[2]} ms`);
  return { rounds, rows };
}
