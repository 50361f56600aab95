import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { intEnv, type BenchContext, type PartResult } from './context.ts';
import { seedDashboard } from './dashboard-seed.ts';
import { hasChromium, loadCells, loadVerdict, signedInPage, timePageLoads } from './page-loads.ts';
import { ROOT } from './procs.ts';
import { table, type Verdict } from './report.ts';

/**
 * The merchant dashboard (BENCH_ONLY=dashboard): the seeded merchant's BENCH_AFFILIATES affiliates plus
 * BENCH_COMMISSIONS commissions (1,000,000) and what the other pages read (bench/dashboard-seed.ts), then each page
 * loaded BENCH_DASHBOARD_LOADS times (20) afresh in Debian's Chromium, timed from the navigation until its data is on
 * screen: the h1 shown and no "Loading …" status left (after one first load and two warm-up loads, which are not
 * counted; the first is reported on its own). Target: p95 ≤ 1 s per page; the dashboard's JavaScript
 * (dist/dashboard/assets/*.js, gzipped) ≤ 250 KB.
 */
const TARGET_JS_BYTES = 250 * 1024;
const PASSWORD = 'bench dashboard password';

export async function runDashboard(ctx: BenchContext): Promise<PartResult> {
  const loads = intEnv('BENCH_DASHBOARD_LOADS', 20, 1);
  const commissions = intEnv('BENCH_COMMISSIONS', 1_000_000, 2);
  const jsBytes = gzippedScripts(join(ROOT, 'dist/dashboard/assets'));
  const verdicts: Verdict[] = [
    {
      target: 'dashboard JavaScript ≤ 250 KB gzipped',
      measured: `${(jsBytes / 1024).toFixed(1)} KB`,
      pass: jsBytes <= TARGET_JS_BYTES,
    },
  ];
  if (!hasChromium()) {
    ctx.log('dashboard: /usr/bin/chromium is missing (apt-get install -y chromium); page loads not measured');
    return { section: '### Dashboard\n\nNot measured: no /usr/bin/chromium.\n', memRows: [], verdicts };
  }
  for (const name of ['affiliates', 'events', 'commissions'] as const) await ctx.service(name);
  await ctx.service('dispatcher', { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' });

  // Never called by any event: only the seeded delivery log shows on it.
  const endpoint = await fetch(`${ctx.gatewayUrl}/api/v1/webhook_endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ctx.keys[0]}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'http://127.0.0.1:9/never', event_types: ['tax_form.submitted'] }),
  });
  if (endpoint.status !== 201)
    throw new Error(`POST /api/v1/webhook_endpoints answered ${endpoint.status}: ${await endpoint.text()}`);
  const endpointId = ((await endpoint.json()) as { id: string }).id;
  const email = `owner-${ctx.runId}@bench.example.com`;
  ctx.log(`dashboard: seeding ${commissions} commissions and the pages' data`);
  const seeded = performance.now();
  await seedDashboard(ctx.sql, ctx.merchantId, { commissions, email, password: PASSWORD, endpointId });
  ctx.log(`dashboard: seeded in ${((performance.now() - seeded) / 1000).toFixed(1)} s`);
  const [affiliate] = await ctx.sql<
    { id: string }[]
  >`select id from affiliates where merchant_id = ${ctx.merchantId} order by created_at desc, id desc limit 1`;
  const [key] = await ctx.sql<
    { id: string }[]
  >`select id from api_keys where merchant_id = ${ctx.merchantId} order by created_at limit 1`;
  const pages: [string, string][] = [
    ['Overview', '/'],
    ['Affiliates', '/affiliates'],
    ['Affiliate', `/affiliates/${affiliate!.id}`],
    ['Commissions', '/commissions'],
    ['Webhooks', '/webhooks'],
    ['Webhook endpoint', `/webhooks/${endpointId}`],
    ['API keys', '/settings/keys'],
    ['API key', `/settings/keys/${key!.id}`],
    ['Settings', '/settings'],
  ];

  const rows: string[][] = [];
  const { page, close } = await signedInPage(ctx.gatewayUrl, email, PASSWORD);
  try {
    for (const [title, path] of pages) {
      const loaded = await timePageLoads(page, `${ctx.gatewayUrl}/dashboard${path}`, title, loads);
      ctx.log(`dashboard: ${title}: p50 ${loaded.p50.toFixed(0)} ms, p95 ${loaded.p95.toFixed(0)} ms`);
      rows.push([title, path.replace(/[a-z]+_[0-9a-z]{26}/, '{id}'), ...loadCells(loaded)]);
      verdicts.push(loadVerdict(title, loads, loaded));
    }
  } finally {
    await close();
  }
  const section = [
    '### Dashboard',
    '',
    `${loads} fresh loads per page in Chromium (1280 px), from navigation to the data on screen, for a merchant with ` +
      `${(await count(ctx, 'affiliates')).toLocaleString('en-US')} affiliates and ${(await count(ctx, 'commissions')).toLocaleString('en-US')} commissions; ` +
      `JavaScript ${(jsBytes / 1024).toFixed(1)} KB gzipped.`,
    '',
    table(['page', 'path', 'first load ms', 'p50 ms', 'p95 ms', 'max ms'], rows, ['l', 'l', 'r', 'r', 'r', 'r']),
    '',
    'The first load of each page comes before the two warm-up loads and is not in the percentiles; for the Overview it',
    'is the one that sums the closed days of the month, which the gateway then reuses for five minutes.',
    '',
  ].join('\n');
  return { section, memRows: [], verdicts };
}

function gzippedScripts(dir: string): number {
  if (!existsSync(dir)) throw new Error(`${dir} is missing: the dashboard was not built (npm run build)`);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.js'))
    .reduce((sum, f) => sum + gzipSync(readFileSync(join(dir, f)), { level: 9 }).byteLength, 0);
}

async function count(ctx: BenchContext, tableName: 'affiliates' | 'commissions'): Promise<number> {
  const [row] = await ctx.sql<
    { n: number }[]
  >`select count(*)::int as n from ${ctx.sql(tableName)} where merchant_id = ${ctx.merchantId}`;
  return row!.n;
}
