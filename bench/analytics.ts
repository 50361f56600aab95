import { RPC_OUTCOME_HEADER, trackingSubject } from '@platform/shared/catalogue';
import type { Sql } from '@platform/shared/db';
import { encodeJson } from '@platform/shared/nats';
import { timeAnalyticsPages } from './analytics-page.ts';
import { loadAnalytics } from './analytics-seed.ts';
import { ascending, intEnv, percentile, type BenchContext, type PartResult } from './context.ts';
import { eventBodies, EVENTS_PATH, seedVisits } from './event-traffic.ts';
import { closedLoop } from './load.ts';
import { backendsUsed, benchDatabaseBackends, processCpu } from './procs.ts';
import { ms, pct, table, type Verdict } from './report.ts';

/**
 * GET /api/v1/analytics at size, and what the rollups add to recording (docs/ANALYTICS.md, docs/PERFORMANCE.md).
 *
 * The seeded merchant (BENCH_AFFILIATES affiliates) gets BENCH_ANALYTICS_CLICKS clicks (10,000,000) and
 * BENCH_ANALYTICS_CONVERSIONS conversion events (1,000,000) over two years with their rollups (bench/analytics-seed.ts).
 * Then, through the gateway and the events service as processes, BENCH_ANALYTICS_READS (60) requests one after
 * another of the 90-day daily series and of the top-25 affiliates over 90 days: p50 and p95 (target ≤ 300 ms each).
 *
 * Recording with rollups against without, in the same run, in alternating rounds (off, on, on, off, off, on, after
 * one not counted) so that drift of the shared machine falls on both: "off" disables the three triggers that append
 * pending facts (the code as it was before analytics), "on" enables them, with the drain running in the events
 * service. A click: BENCH_ANALYTICS_CLICKS_RECORDED (4,000) referral clicks recorded by the events service
 * (clickCost), as CPU of the events service and the bench database's backends per click; an event: POST
 * /api/v1/events through the gateway, closed loop for BENCH_DURATION, as the same CPU per event and as the rate.
 * Both include the drain's work for what they recorded. Target: at most 10 % more.
 */

const TARGET_READ_P95_MS = 300;
const TARGET_EXTRA = 0.1;
const DAY_MS = 86_400_000;
/** Approved affiliates of the seeded merchant (bench/seed.ts: every tenth is pending, every fiftieth from 1 suspended). */
const CLICK_SLUGS = ['affiliate-2', 'affiliate-3', 'affiliate-4', 'affiliate-5', 'affiliate-6', 'affiliate-7'];
const TRIGGERS = [
  ['visits', 'analytics_pending_of_clicks'],
  ['conversion_events', 'analytics_pending_of_events'],
  ['commissions', 'analytics_pending_of_commissions'],
] as const;

const analyticsSettings = () => ({
  clicks: intEnv('BENCH_ANALYTICS_CLICKS', 10_000_000, 1000),
  conversions: intEnv('BENCH_ANALYTICS_CONVERSIONS', 1_000_000, 100),
  reads: intEnv('BENCH_ANALYTICS_READS', 60, 5),
  clickInserts: intEnv('BENCH_ANALYTICS_CLICKS_RECORDED', 4000, 100),
});

export async function runAnalytics(ctx: BenchContext): Promise<PartResult> {
  const { log } = ctx;
  const s = analyticsSettings();
  const loadStart = performance.now();
  await loadAnalytics(ctx.sql, ctx.merchantId, { clicks: s.clicks, conversions: s.conversions, log });
  const loadSeconds = (performance.now() - loadStart) / 1000;
  log(`analytics: loaded in ${loadSeconds.toFixed(0)} s`);
  await ctx.service('events');

  const since = encodeURIComponent(new Date(Date.now() - 90 * DAY_MS).toISOString());
  const series = await timeReads(ctx, `/api/v1/analytics?start=${since}&group_by=day`, s.reads);
  const top = await timeReads(ctx, `/api/v1/analytics?start=${since}&group_by=affiliate&limit=25`, s.reads);

  const clicks = { off: [] as number[], on: [] as number[] };
  const events = { off: [] as number[], on: [] as number[] };
  const eventRates = { off: [] as number[], on: [] as number[] };
  const visits = await seedVisits(ctx.sql, ctx.merchantId, 20_000);
  const bodies = eventBodies(visits, `an${ctx.runId}-`, log);
  await ctx.sql`update merchants set settings = settings || '{"landing_url": "https://shop.example.com/"}' where id = ${ctx.merchantId}`;
  try {
    // A first round, not counted, warms caches and plans that the first counted round would otherwise pay alone.
    await clickCost(ctx, s.clickInserts);
    await eventCost(ctx, bodies);
    for (const mode of ['off', 'on', 'on', 'off', 'off', 'on'] as const) {
      await setTriggers(ctx.sql, mode === 'on');
      clicks[mode].push(await clickCost(ctx, s.clickInserts));
      const e = await eventCost(ctx, bodies);
      events[mode].push(e.cpuUsPerEvent);
      eventRates[mode].push(e.rps);
      log(
        `analytics: rollups ${mode}: click ${clicks[mode].at(-1)!.toFixed(0)} µs, event ${e.cpuUsPerEvent.toFixed(0)} µs, ${e.rps.toFixed(0)} events/s`,
      );
    }
  } finally {
    await setTriggers(ctx.sql, true);
  }
  const pages = await timeAnalyticsPages(ctx);
  const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
  const extra = (m: { off: number[]; on: number[] }) => mean(m.on) / mean(m.off) - 1;
  const clickExtra = extra(clicks);
  const eventExtra = extra(events);
  const rateLoss = 1 - mean(eventRates.on) / mean(eventRates.off);

  const verdicts: Verdict[] = [
    {
      target: `90-day daily series p95 ≤ ${TARGET_READ_P95_MS} ms`,
      measured: `${ms(series.p95)} ms`,
      pass: series.p95 <= TARGET_READ_P95_MS,
    },
    {
      target: `top-25 affiliates (90 days) p95 ≤ ${TARGET_READ_P95_MS} ms`,
      measured: `${ms(top.p95)} ms`,
      pass: top.p95 <= TARGET_READ_P95_MS,
    },
    {
      target: 'recording a click: ≤ 10 % more with rollups',
      measured: pct(clickExtra),
      pass: clickExtra <= TARGET_EXTRA,
    },
    {
      target: 'recording an event: ≤ 10 % more with rollups',
      measured: pct(eventExtra),
      pass: eventExtra <= TARGET_EXTRA,
    },
    ...pages.verdicts,
  ];
  const section = [
    `Merchant: ${s.clicks.toLocaleString('en')} clicks and ${s.conversions.toLocaleString('en')} conversion events over two years, loaded with their rollups in ${loadSeconds.toFixed(0)} s.`,
    '',
    table(
      ['read (sequential, through the gateway)', 'requests', 'p50 ms', 'p95 ms'],
      [
        ['90-day daily series', String(s.reads), ms(series.p50), ms(series.p95)],
        ['top-25 affiliates, 90 days', String(s.reads), ms(top.p50), ms(top.p95)],
      ],
      ['l', 'r', 'r', 'r'],
    ),
    '',
    table(
      ['recording', 'without rollups', 'with rollups', 'extra'],
      [
        [
          'click: CPU µs per referral click (events service + Postgres)',
          mean(clicks.off).toFixed(0),
          mean(clicks.on).toFixed(0),
          pct(clickExtra),
        ],
        [
          'event: CPU µs per POST /api/v1/events (events service + Postgres)',
          mean(events.off).toFixed(0),
          mean(events.on).toFixed(0),
          pct(eventExtra),
        ],
        [
          'event: closed-loop rate, events/s',
          mean(eventRates.off).toFixed(0),
          mean(eventRates.on).toFixed(0),
          pct(rateLoss),
        ],
      ],
      ['l', 'r', 'r', 'r'],
    ),
    '',
    pages.section,
  ].join('\n');
  return { section, memRows: [], verdicts };
}

/** Sequential GETs (after three to warm up): p50 and p95 of their times, failing the run on any other answer than 200. */
async function timeReads(ctx: BenchContext, path: string, count: number): Promise<{ p50: number; p95: number }> {
  const times: number[] = [];
  for (let i = -3; i < count; i++) {
    const started = performance.now();
    const res = await fetch(`${ctx.gatewayUrl}${path}`, { headers: { authorization: `Bearer ${ctx.keys[0]}` } });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    if (i >= 0) times.push(performance.now() - started);
  }
  const sorted = ascending(times);
  ctx.log(`analytics: ${path}: p50 ${ms(percentile(sorted, 50))} ms, p95 ${ms(percentile(sorted, 95))} ms`);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
}

/** The triggers that append pending facts on or off (ALTER TABLE on a partitioned table reaches its partitions). */
async function setTriggers(sql: Sql, on: boolean): Promise<void> {
  for (const [tableName, trigger] of TRIGGERS)
    await sql.unsafe(`alter table ${tableName} ${on ? 'enable' : 'disable'} trigger ${trigger}`);
}

/**
 * CPU µs per referral click recorded by the events service (its process and the bench database's backends, drain
 * included): `count` referral requests on the events service's tracking subject, 8 at a time, as the gateway sends
 * them for GET /r/{merchant_id}/{slug} (the gateway's per-address limit would hold a bench to 120 a minute).
 */
async function clickCost(ctx: BenchContext, count: number): Promise<number> {
  const events = ctx.running('events');
  if (!events) throw new Error('the events service is not running');
  const subject = trackingSubject(ctx.prefix, 'referral');
  const eventsCpu = () => processCpu(events.proc.pid!) ?? 0;
  const before = await benchDatabaseBackends(ctx.sql);
  const eventsBefore = eventsCpu();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const request = {
        request_id: `req_bench${i}`,
        deadline: Date.now() + 10_000,
        merchant: { id: ctx.merchantId },
        slug: CLICK_SLUGS[i % CLICK_SLUGS.length],
        current_visit_id: null,
        client: {
          ip: `10.0.${(i >> 8) & 255}.${i & 255}`,
          user_agent: 'Mozilla/5.0 (bench)',
          referrer: null,
          country: null,
        },
      };
      const reply = await ctx.nc.request(subject, encodeJson(request), { timeout: 10_000 });
      if (reply.headers?.get(RPC_OUTCOME_HEADER) !== 'created')
        throw new Error(`a referral click was not recorded: ${new TextDecoder().decode(reply.data).slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  await drained(ctx.sql);
  const used = backendsUsed(before, await benchDatabaseBackends(ctx.sql)) + eventsCpu() - eventsBefore;
  return (used * 1e6) / count;
}

/**
 * POST /api/v1/events for BENCH_DURATION, closed loop: CPU µs per event recorded of the events service and the bench
 * database's backends (drain included, as for clicks), and the rate.
 */
async function eventCost(ctx: BenchContext, bodies: () => string): Promise<{ cpuUsPerEvent: number; rps: number }> {
  const events = ctx.running('events')!;
  const eventsCpu = () => processCpu(events.proc.pid!) ?? 0;
  const before = await benchDatabaseBackends(ctx.sql);
  const eventsBefore = eventsCpu();
  const figures = await closedLoop(
    { base: ctx.gatewayUrl, method: 'POST', path: EVENTS_PATH, keys: ctx.keys, body: bodies },
    { connections: ctx.settings.connections, duration: ctx.settings.duration },
  );
  await drained(ctx.sql);
  const used = backendsUsed(before, await benchDatabaseBackends(ctx.sql)) + eventsCpu() - eventsBefore;
  return { cpuUsPerEvent: (used * 1e6) / Math.max(1, figures.statuses['201'] ?? 0), rps: figures.rps };
}

/** Waits until the drain has moved every pending fact (so its work is counted in the round that caused it). */
async function drained(sql: Sql): Promise<void> {
  for (;;) {
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from analytics_pending`;
    if (row!.n === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}
