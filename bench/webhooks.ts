import { jetstreamManager } from '@nats-io/jetstream';
import { Agent, request } from 'undici';
import { streamName } from '@platform/shared/catalogue';
import { connectDatabase, type Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import { OUTBOX_RELAY_INTERVAL_DEFAULT_MS } from '@platform/shared/config';
import { createLogger } from '@platform/shared/log';
import { enqueueEvents, outboxCommitted } from '@platform/shared/outbox';
import { startOutboxRelay } from '@platform/shared/outbox-relay';
import { generateWebhookSecret, webhookHeaders } from '@platform/shared/webhooks';
import { createKey, createMerchant } from '../scripts/admin/commands.ts';
import {
  ascending,
  idleMemory,
  intEnv,
  measurer,
  memoryRows,
  percentile,
  sleep,
  waitUntil,
  type BenchContext,
  type Measured,
  type PartResult,
} from './context.ts';
import type { Figures } from './load.ts';
import { backendsUsed, benchDatabaseBackends, sampleMemory, startChild, type Child } from './procs.ts';
import type { StatsRequest, TagStats } from './receiver.ts';
import { cpuTable, ms, pct, table, type MemoryRow, type Row, type Verdict } from './report.ts';

/**
 * Webhook delivery by the dispatcher (a process of its own, production build) to a loopback receiver
 * (bench/receiver.ts, a process of its own) answering 200, beside raw undici POSTs to the same receiver.
 *
 * Events enter where the services put them: rows in the outbox (the rows enqueueEvent writes), published by the
 * services' outbox relays (events, commissions, affiliates: whichever run; the events service is started for its
 * relay when none does), fanned out by the dispatcher into deliveries, hinted, claimed and POSTed. Scenarios:
 *
 * - raw undici POST: DISPATCHER_CONCURRENCY (64, the dispatcher's WEBHOOK_CONCURRENCY) concurrent POSTs in a
 *   closed loop, a body of the size of a delivered payout.sent envelope with the same webhook headers: the baseline;
 * - deliveries/s: payout.sent events spread over BENCH_WEBHOOK_ENDPOINTS (16) merchants with one endpoint each (so
 *   their per-endpoint slots, 16 each, more than fill the dispatcher's 64), written to the outbox at once; the rate at which they
 *   arrive, from the first arrival to the last (target ≥ 3,000/s). A warm-up batch (300 × BENCH_WARMUP) comes first
 *   and sizes the measured batch to about BENCH_DURATION seconds at 1.5 × its rate (at most
 *   BENCH_WEBHOOK_DELIVERIES, 3,000 × BENCH_DURATION; at least 500). Then to one endpoint alone (its concurrency, 16,
 *   caps it), about BENCH_DURATION / 2 seconds' worth: reported, no target;
 * - event to first attempt: BENCH_WEBHOOK_RATE (500) tax_form.submitted events/s for BENCH_DURATION, open loop,
 *   written as a service writes its domain events (one transaction with enqueueEvents each, then outboxCommitted,
 *   which wakes the outbox relay of the producing process: the bench runs one on its producer pool, so its CPU is
 *   the load generator's), to the bench merchant's one endpoint; the receiver's arrival time minus
 *   the moment the event was due (stamped into its data as bench_sent_at) (targets p50 ≤ 50 ms, p99 ≤ 250 ms);
 * - noisy neighbour: another merchant's endpoint answering 503 with BENCH_WEBHOOK_BACKLOG (50,000) deliveries due
 *   (inserted directly: messages and pending deliveries as fan-out writes them, then ANALYZE), failure_threshold
 *   100 so it stays enabled while measured; then the same event-to-first-attempt run on the healthy endpoint
 *   (target: p99 within twice the quiet p99).
 *
 * The dispatcher starts when this part does. The domain events of the earlier parts (affiliate.created,
 * commission.created) found no endpoint then: they are purged from the stream and the outbox reconciler's
 * watermark is moved past them, as a dispatcher that had been running would have left them, so that the run
 * measures the steady state rather than a catch-up.
 */

const TARGET_DELIVERIES_PER_S = 3000;
const TARGET_P50_MS = 50;
const TARGET_P99_MS = 250;
const TARGET_NOISY_FACTOR = 2;
/** The dispatcher's WEBHOOK_CONCURRENCY and WEBHOOK_ENDPOINT_CONCURRENCY defaults (the bench does not change them). */
const DISPATCHER_CONCURRENCY = 64;
const ENDPOINT_CONCURRENCY = 16;
/** The outbox relay's NOTIFY channel (shared/src/outbox.ts). */
const OUTBOX_CHANNEL = 'outbox_pending';
/** Postgres CPU of the bench database's backends only (a part of postgres*), reported in a table of its own. */
const BENCH_DB_COLUMN = 'postgres, bench db';
/** Arrivals are awaited until none came for this long. */
const STALL_MS = 30_000;

const webhookSettings = (duration: number) => ({
  endpoints: intEnv('BENCH_WEBHOOK_ENDPOINTS', 16, 1),
  deliveries: intEnv('BENCH_WEBHOOK_DELIVERIES', 3000 * duration, 100),
  rate: intEnv('BENCH_WEBHOOK_RATE', 500, 1),
  backlog: intEnv('BENCH_WEBHOOK_BACKLOG', 50_000, 0),
});

export async function runWebhooks(ctx: BenchContext): Promise<PartResult> {
  const { log, settings, sql } = ctx;
  const s = webhookSettings(settings.duration);

  // ---- the dispatcher, after the earlier parts' domain events are settled ----------------------------------------
  const startedHere: Child[] = [];
  if (!ctx.running('events') && !ctx.running('commissions') && !ctx.running('affiliates'))
    startedHere.push(await ctx.service('events'));
  const relays = (['affiliates', 'events', 'commissions'] as const)
    .map((n) => ctx.running(n))
    .filter((c): c is Child => c !== undefined);
  if (!ctx.running('dispatcher')) {
    const settled = await waitUntil(
      async () =>
        (await sql<{ n: number }[]>`select count(*)::int as n from outbox where published_at is null`)[0]!.n === 0,
      120_000,
    );
    if (!settled) log('webhooks: the outbox still has unpublished rows after 2 minutes');
    const purged = await (await jetstreamManager(ctx.nc)).streams.purge(streamName(ctx.prefix, 'DOMAIN_EVENTS'));
    await sql`update webhook_fanout_watermark set seq = (select coalesce(max(seq), 0) from outbox)`;
    log(`webhooks: ${purged.purged} domain events of the earlier parts purged (no endpoint existed for them)`);
  }
  const dispatcher = await ctx.service('dispatcher');

  const receiverChild = ctx.adopt(
    startChild('receiver', 'bench/receiver.ts', {}, { flagsOf: 'dispatcher', ipc: true }),
  );
  const receiverPort = await new Promise<number>((resolve, reject) => {
    receiverChild.proc.once('message', (m: { port: number }) => resolve(m.port));
    receiverChild.proc.once('exit', (code) =>
      reject(new Error(`receiver exited with ${code}:\n${receiverChild.output.join('\n')}`)),
    );
  });
  const receiverUrl = `http://127.0.0.1:${receiverPort}`;
  const receiver = receiverClient(receiverChild);

  // ---- endpoints ------------------------------------------------------------------------------------------------
  const tp: string[] = []; // merchants with one throughput endpoint each
  for (let i = 0; i < s.endpoints; i++) {
    const merchant = (await createMerchant(sql, `Bench Webhooks ${i}`, 'enterprise'))!['id'] as string;
    const { key } = await createKey(sql, merchant, 'read,write', 60_000);
    await createEndpoint(ctx, key, { url: `${receiverUrl}/ok/tp/${i}`, event_types: ['payout.sent'] });
    tp.push(merchant);
  }
  await createEndpoint(ctx, ctx.keys[0]!, { url: `${receiverUrl}/ok/healthy`, event_types: ['tax_form.submitted'] });
  const noisyMerchant = (await createMerchant(sql, 'Bench Noisy Neighbour', 'enterprise'))!['id'] as string;
  const noisyKey = (await createKey(sql, noisyMerchant, 'read,write', 60_000)).key;
  const noisyEndpoint = await createEndpoint(ctx, noisyKey, {
    url: `${receiverUrl}/fail/noisy`,
    event_types: ['payout.failed'],
    failure_threshold: 100,
  });
  log(`webhooks: receiver on ${receiverUrl}; ${s.endpoints} throughput endpoints, 1 healthy, 1 answering 503`);

  const processes = [dispatcher, receiverChild, ...relays];
  const m = measurer(ctx, processes);
  const memChildren = [
    { child: dispatcher, target: true },
    ...startedHere.map((child) => ({ child, target: true })),
    { child: receiverChild, target: false },
  ];
  const idle = idleMemory(memChildren.map((c) => c.child));
  const memory = sampleMemory(memChildren.map((c) => c.child));

  const waitArrivals = async (tag: string, expected: number): Promise<TagStats> => {
    let last = await receiver.stats(tag);
    let progressAt = performance.now();
    while (last.requests < expected && performance.now() - progressAt < STALL_MS) {
      await sleep(100);
      const now = await receiver.stats(tag);
      if (now.requests > last.requests) progressAt = performance.now();
      last = now;
    }
    if (last.requests < expected)
      log(`webhooks: ${tag}: ${last.requests} of ${expected} arrived, none for ${STALL_MS / 1000} s`);
    return receiver.stats(tag, true);
  };

  // ---- raw undici baseline --------------------------------------------------------------------------------------
  const sample = envelope(newId('msg'), 'payout.sent', tp[0]!, payoutData(0));
  const rawHeaders = {
    'content-type': 'application/json',
    'user-agent': 'AffiliatePlatform-Webhooks/1.0',
    ...webhookHeaders([generateWebhookSecret()], newId('msg'), Math.floor(Date.now() / 1000), sample),
  };
  const rawConcurrency = Math.min(DISPATCHER_CONCURRENCY, s.endpoints * ENDPOINT_CONCURRENCY);
  if (settings.warmup > 0) {
    log(`raw undici POST: warm-up ${settings.warmup} s`);
    await rawPosts(`${receiverUrl}/ok/raw`, rawConcurrency, settings.warmup, sample, rawHeaders);
  }
  log(`raw undici POST: ${settings.duration} s, ${rawConcurrency} concurrent, ${Buffer.byteLength(sample)}-byte body`);
  const raw = await m.timed(() =>
    rawPosts(`${receiverUrl}/ok/raw`, rawConcurrency, settings.duration, sample, rawHeaders),
  );
  log(`raw undici POST: ${raw.figures.rps.toFixed(0)} req/s`);

  // ---- deliveries per second ------------------------------------------------------------------------------------
  let seq = 0;
  const deliver = async (name: string, count: number, merchants: string[]): Promise<Measured & { tail: number }> => {
    await receiver.stats('tp', true);
    log(`${name}: ${count} payout.sent events to ${merchants.length} endpoint(s)`);
    const before = m.cpu.snapshot();
    const backendsBefore = await benchDatabaseBackends(sql);
    const t0 = performance.now();
    const rows = Array.from({ length: count }, (_, i) => ({
      merchantId: merchants[i % merchants.length]!,
      type: 'payout.sent',
      data: payoutData(seq++),
    }));
    await enqueueBulk(sql, rows);
    const st = await waitArrivals('tp', count);
    const cpu = m.cpu.since(before);
    cpu[BENCH_DB_COLUMN] = backendsUsed(backendsBefore, await benchDatabaseBackends(sql));
    const span = st.first !== null && st.last !== null && st.requests > 1 ? (st.last - st.first) / 1000 : NaN;
    const figures: Figures = {
      rps: (st.requests - 1) / span,
      p50: NaN,
      p99: NaN,
      requests: st.requests,
      non2xx: 0,
      errors: count - st.requests,
      statuses: {},
    };
    // How long after the first outbox row was written the first delivery arrived (relay, fan-out, hint, claim).
    const tail = st.first !== null ? st.first - (performance.timeOrigin + t0) : NaN;
    log(
      `${name}: ${figures.rps.toFixed(0)} deliveries/s (${st.requests} in ${span.toFixed(1)} s)${st.repeats ? `, ${st.repeats} repeated` : ''}`,
    );
    return { figures, cpu, tail };
  };
  // The warm-up (JIT, connections) also sizes the measured batches to about BENCH_DURATION seconds of delivery at
  // the rate it reached, so that a slow machine does not take many times longer (capped by BENCH_WEBHOOK_DELIVERIES).
  const warm = await deliver('dispatcher warm-up', Math.min(s.deliveries, 300 * Math.max(1, settings.warmup)), tp);
  // A database that has been running has statistics on these tables (autovacuum analyzes them; see migration 007).
  // This one was created a minute ago: without them the planner takes webhook_deliveries for a handful of rows and
  // answers the claims and records with sequential scans, which measures the newness of the database, not the design.
  await sql`analyze webhook_endpoints, webhook_messages, webhook_deliveries, webhook_attempts`;
  const sized = (rate: number, min: number) =>
    Math.max(min, Math.min(s.deliveries, Number.isFinite(rate) ? Math.round(rate * settings.duration) : s.deliveries));
  const many = await deliver(`deliveries to ${s.endpoints} endpoints`, sized(warm.figures.rps * 1.5, 500), tp);
  const one = await deliver('deliveries to 1 endpoint', sized(many.figures.rps / 2, 200), tp.slice(0, 1));

  // ---- event to first attempt, quiet then beside a failing endpoint with a backlog -------------------------------
  // The producing service: its pool, and the outbox relay that a service producing domain events runs beside it.
  const producer = connectDatabase(ctx.databaseUrl, { max: 8, applicationName: 'bench-producer' });
  // Paced as the services' relays are by default (OUTBOX_RELAY_INTERVAL_MS).
  const producerRelay = startOutboxRelay({
    sql: producer,
    nc: ctx.nc,
    prefix: ctx.prefix,
    log: createLogger({ service: 'bench-producer' }, 'warn'),
    minIntervalMs: OUTBOX_RELAY_INTERVAL_DEFAULT_MS,
  });
  const firstAttempt = async (name: string): Promise<Measured & { latency: Latency }> => {
    await receiver.stats('healthy', true);
    log(`${name}: ${s.rate} tax_form.submitted events/s for ${settings.duration} s, open loop`);
    const before = m.cpu.snapshot();
    const backendsBefore = await benchDatabaseBackends(sql);
    const produced = await produceAtRate(producer, ctx.merchantId, s.rate, settings.duration);
    const st = await waitArrivals('healthy', produced.sent);
    const cpu = m.cpu.since(before);
    cpu[BENCH_DB_COLUMN] = backendsUsed(backendsBefore, await benchDatabaseBackends(sql));
    const sorted = ascending(st.latencies);
    const latency = {
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      max: sorted.length ? sorted[sorted.length - 1]! : NaN,
      received: sorted.length,
      produced: produced.sent,
    };
    const figures: Figures = {
      rps: produced.rate,
      p50: latency.p50,
      p99: latency.p99,
      requests: st.requests,
      non2xx: 0,
      errors: produced.failed + Math.max(0, produced.sent - st.requests),
      statuses: {},
    };
    log(
      `${name}: p50 ${latency.p50.toFixed(1)} ms, p99 ${latency.p99.toFixed(1)} ms, ${st.requests} of ${produced.sent} arrived`,
    );
    return { figures, cpu, latency };
  };
  const quiet = await firstAttempt('event → first attempt, quiet');

  let noisy: (Measured & { latency: Latency }) | null = null;
  let noisyNote = 'not run (BENCH_WEBHOOK_BACKLOG=0)';
  let noisyAttempts = 0;
  if (s.backlog > 0) {
    await receiver.stats('noisy', true);
    const t0 = performance.now();
    await insertBacklog(sql, noisyMerchant, noisyEndpoint, s.backlog);
    log(
      `noisy neighbour: ${s.backlog} due deliveries inserted for the 503 endpoint in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    const engaged = await waitUntil(async () => (await receiver.stats('noisy')).requests > 0, 15_000);
    if (!engaged) log('noisy neighbour: the 503 endpoint got no attempt within 15 s');
    noisy = await firstAttempt('event → first attempt, noisy neighbour');
    const attempts = await receiver.stats('noisy', true);
    noisyAttempts = attempts.requests;
    const [state] = await sql<{ enabled: boolean; consecutive_failures: number; due: number }[]>`
      select e.enabled, e.consecutive_failures,
             (select count(*)::int from webhook_deliveries d where d.endpoint_id = e.id and d.status in ('pending', 'retrying')) as due
      from webhook_endpoints e where e.id = ${noisyEndpoint}`;
    noisyNote =
      `the 503 endpoint had ${s.backlog.toLocaleString('en')} deliveries due; it got ${attempts.requests} attempts from the backlog's insertion to the end of the run, ` +
      `was ${state?.enabled ? 'still enabled' : 'disabled'} with ${state?.consecutive_failures ?? '?'} consecutive failures and ${state?.due ?? '?'} deliveries still waiting`;
  }
  await producerRelay.stop();
  await producer.end({ timeout: 2 });
  memory.stop();

  // ---- report ---------------------------------------------------------------------------------------------------
  const rows: [string, Measured, string][] = [
    [`raw undici POST, ${rawConcurrency} concurrent (${Buffer.byteLength(sample)}-byte body)`, raw, 'baseline'],
    [`dispatcher → ${s.endpoints} endpoints (${s.endpoints} merchants)`, many, pct(many.figures.rps / raw.figures.rps)],
    [`dispatcher → 1 endpoint (concurrency ${ENDPOINT_CONCURRENCY})`, one, pct(one.figures.rps / raw.figures.rps)],
  ];
  const throughputTable = table(
    ['scenario', 'deliveries/s', 'p50 ms', 'p99 ms', 'deliveries', 'missing', 'vs raw undici'],
    rows.map(([label, x, versus]) => [
      label,
      x.figures.rps.toFixed(0),
      ms(x.figures.p50),
      ms(x.figures.p99),
      String(x.figures.requests),
      String(x.figures.errors),
      versus,
    ]),
    ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
  const latencyRows: [string, Measured & { latency: Latency }][] = [[`quiet, ${s.rate} events/s`, quiet]];
  if (noisy)
    latencyRows.push([`beside a 503 endpoint with ${s.backlog.toLocaleString('en')} due, ${s.rate} events/s`, noisy]);
  const latencyTable = table(
    ['event → first attempt', 'events/s produced', 'p50 ms', 'p99 ms', 'max ms', 'arrived', 'missing'],
    latencyRows.map(([label, x]) => [
      label,
      x.figures.rps.toFixed(0),
      ms(x.latency.p50),
      ms(x.latency.p99),
      ms(x.latency.max),
      String(x.latency.received),
      String(x.figures.errors),
    ]),
    ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
  const cpuRows: Row[] = [
    { scenario: rows[0]![0], ...raw },
    { scenario: rows[1]![0], ...many },
    { scenario: rows[2]![0], ...one },
    ...latencyRows.map(([label, x]) => ({
      scenario: `event → first attempt, ${label}`,
      figures: x.figures,
      cpu: x.cpu,
    })),
  ];
  const columns = [...processes.map((c) => c.name), 'load generator', 'postgres*', 'nats-server*'];

  // Twice the quiet p99 only means something when the quiet run kept up with the rate (met its own p99 target).
  const comparable = quiet.latency.p99 <= TARGET_P99_MS && quiet.figures.errors === 0;
  const verdicts: Verdict[] = [
    {
      target: `webhook deliveries ≥ ${TARGET_DELIVERIES_PER_S.toLocaleString('en')}/s`,
      measured: `${many.figures.rps.toFixed(0)}/s to ${s.endpoints} endpoints (${pct(many.figures.rps / raw.figures.rps)} of raw undici ${raw.figures.rps.toFixed(0)}/s)${many.figures.errors ? `, ${many.figures.errors} missing` : ''}`,
      pass: many.figures.rps >= TARGET_DELIVERIES_PER_S && many.figures.errors === 0,
    },
    {
      target: `event → first attempt p50 ≤ ${TARGET_P50_MS} ms at ${s.rate} events/s`,
      measured: `p50 ${quiet.latency.p50.toFixed(1)} ms`,
      pass: quiet.latency.p50 <= TARGET_P50_MS && quiet.figures.errors === 0,
    },
    {
      target: `event → first attempt p99 ≤ ${TARGET_P99_MS} ms at ${s.rate} events/s`,
      measured: `p99 ${quiet.latency.p99.toFixed(1)} ms${quiet.figures.errors ? `, ${quiet.figures.errors} missing` : ''}`,
      pass: quiet.latency.p99 <= TARGET_P99_MS && quiet.figures.errors === 0,
    },
    ...(noisy
      ? [
          {
            target: `healthy endpoint p99 beside a 503 endpoint with ${s.backlog.toLocaleString('en')} due ≤ ${TARGET_NOISY_FACTOR} × quiet p99`,
            measured:
              `p99 ${noisy.latency.p99.toFixed(1)} ms = ${(noisy.latency.p99 / quiet.latency.p99).toFixed(2)} × quiet ${quiet.latency.p99.toFixed(1)} ms` +
              (noisy.figures.errors ? `, ${noisy.figures.errors} missing` : '') +
              (noisyAttempts === 0 ? '; the 503 endpoint got no attempt' : '') +
              (comparable
                ? ''
                : `; not judged: the quiet run missed its own p99 target, both runs measure a growing queue`),
            pass:
              comparable && noisy.latency.p99 <= TARGET_NOISY_FACTOR * quiet.latency.p99 && noisy.figures.errors === 0,
          },
        ]
      : []),
  ];
  const section = [
    throughputTable,
    '',
    `First delivery ${many.tail.toFixed(0)} ms after the first outbox row was written (${s.endpoints} endpoints).`,
    '',
    latencyTable,
    '',
    `Noisy neighbour: ${noisyNote}.`,
    '',
    cpuTable(cpuRows, columns, 'delivery or event'),
    '',
    // The postgres* column counts every postgres process on the machine; this one only the bench database's.
    table(
      ['Postgres CPU µs per delivery or event, backends of the bench database only', 'µs'],
      cpuRows
        .filter((r) => r.cpu[BENCH_DB_COLUMN] != null)
        .map((r) => [r.scenario, ((r.cpu[BENCH_DB_COLUMN]! / Math.max(1, r.figures.requests)) * 1e6).toFixed(0)]),
      ['l', 'r'],
    ),
  ].join('\n');

  const memRows: MemoryRow[] = memoryRows(memChildren, idle, memory.peak);
  return { section, memRows, verdicts };
}

interface Latency {
  p50: number;
  p99: number;
  max: number;
  received: number;
  produced: number;
}

function receiverClient(child: Child) {
  let next = 0;
  const waiting = new Map<number, (s: TagStats) => void>();
  child.proc.on('message', (m: { id?: number; stats?: TagStats }) => {
    if (m.id === undefined || !m.stats) return;
    waiting.get(m.id)?.(m.stats);
    waiting.delete(m.id);
  });
  return {
    stats(tag: string, reset = false): Promise<TagStats> {
      const id = next++;
      return new Promise((resolve, reject) => {
        waiting.set(id, resolve);
        const message: StatsRequest = { id, cmd: 'stats', tag, reset };
        child.proc.send(message, (err) => {
          if (err) reject(err);
        });
      });
    },
  };
}

async function createEndpoint(ctx: BenchContext, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${ctx.gatewayUrl}/api/v1/webhook_endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`POST /api/v1/webhook_endpoints answered ${res.status}: ${text}`);
  return (JSON.parse(text) as { id: string }).id;
}

/** A payout.sent event's data, as the payouts code would emit it (ids of the right shape, nothing looked up). */
function payoutData(i: number): Record<string, unknown> {
  return {
    payout_id: newId('po'),
    affiliate_id: newId('aff'),
    amount: (12_550 + (i % 1000)) / 100,
    currency: 'USD',
    status: 'sent',
    commission_ids: [newId('com'), newId('com'), newId('com')],
    commission_count: 3,
  };
}

/** The webhook body the dispatcher sends (serialiseEnvelope: id, type, created_at, merchant_id, data). */
function envelope(id: string, type: string, merchantId: string, data: Record<string, unknown>): string {
  return JSON.stringify({ id, type, created_at: new Date().toISOString(), merchant_id: merchantId, data });
}

/**
 * Outbox rows as enqueueEvents writes them (id msg_…, merchant, type, data; created_at by default), 5,000 per
 * INSERT … SELECT FROM unnest, each batch committed and announced on the relay's NOTIFY channel at once.
 */
async function enqueueBulk(
  sql: Sql,
  rows: { merchantId: string; type: string; data: Record<string, unknown> }[],
): Promise<void> {
  for (let start = 0; start < rows.length; start += 5000) {
    const batch = rows.slice(start, start + 5000);
    await sql`
      insert into outbox (id, merchant_id, type, data)
      select t.id, t.merchant_id, t.type, t.data::jsonb
      from unnest(${batch.map(() => newId('msg'))}::text[], ${batch.map((r) => r.merchantId)}::text[],
                  ${batch.map((r) => r.type)}::text[], ${batch.map((r) => JSON.stringify(r.data))}::text[])
        as t(id, merchant_id, type, data)`;
    await sql`select pg_notify(${OUTBOX_CHANNEL}, '')`;
  }
}

/**
 * Open loop: event i is due at start + i/rate and is then written as the services write their domain events (a
 * transaction of its own with enqueueEvents, then outboxCommitted, which wakes the relay running on `sql`), a
 * tax_form.submitted of the bench merchant, whatever happened to the earlier ones; its data carries the moment it
 * was due (bench_sent_at, epoch ms), from which the receiver measures.
 */
async function produceAtRate(sql: Sql, merchantId: string, rate: number, duration: number) {
  const total = Math.max(1, Math.round(rate * duration));
  const inFlight = new Set<Promise<void>>();
  const affiliateId = newId('aff');
  let failed = 0;
  let n = 0;
  const start = performance.now();
  const interval = 1000 / rate;
  const send = (due: number) => {
    const data = {
      affiliate_id: affiliateId,
      form_type: 'W-9',
      submitted_at: new Date(performance.timeOrigin + due).toISOString(),
      bench_sent_at: performance.timeOrigin + due,
    };
    const work = sql
      .begin(async (tx) => {
        await enqueueEvents(tx, [{ merchantId, type: 'tax_form.submitted', data }]);
      })
      .then(() => outboxCommitted(sql))
      .catch(() => {
        failed++;
      });
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };
  while (n < total) {
    const dueNow = Math.min(total, Math.floor((performance.now() - start) / interval) + 1);
    for (; n < dueNow; n++) send(start + n * interval);
    if (n < total) await sleep(1);
  }
  const elapsed = (performance.now() - start) / 1000;
  while (inFlight.size > 0) await Promise.all([...inFlight]);
  return { sent: total - failed, failed, rate: total / elapsed };
}

/**
 * The noisy neighbour's backlog: `count` messages (payout.failed bodies) and as many deliveries to `endpointId`,
 * pending and due now, never hinted (queued_at null): the rows fanOut writes, 10,000 per statement. ANALYZE after,
 * as autovacuum would have by the time such a backlog had built up.
 */
async function insertBacklog(sql: Sql, merchantId: string, endpointId: string, count: number): Promise<void> {
  for (let start = 0; start < count; start += 10_000) {
    const n = Math.min(10_000, count - start);
    const messages: string[] = [];
    const bodies: string[] = [];
    const deliveries: string[] = [];
    for (let i = 0; i < n; i++) {
      const id = newId('msg');
      messages.push(id);
      bodies.push(
        envelope(id, 'payout.failed', merchantId, {
          ...payoutData(start + i),
          status: 'failed',
          failure_reason: 'bank account closed',
        }),
      );
      deliveries.push(newId('dlv'));
    }
    await sql.begin(async (tx) => {
      await tx`
        insert into webhook_messages (id, merchant_id, type, body, created_at)
        select t.id, ${merchantId}, 'payout.failed', t.body, now()
        from unnest(${messages}::text[], ${bodies}::text[]) as t(id, body)`;
      await tx`
        insert into webhook_deliveries (id, message_id, endpoint_id, merchant_id, status, next_attempt_at, queued_at)
        select t.id, t.message_id, ${endpointId}, ${merchantId}, 'pending', now(), null
        from unnest(${deliveries}::text[], ${messages}::text[]) as t(id, message_id)`;
    });
  }
  await sql`analyze webhook_messages`;
  await sql`analyze webhook_deliveries`;
}

/** Closed loop of `concurrency` POSTs through one undici Agent (as the dispatcher's), for `seconds`. */
async function rawPosts(
  url: string,
  concurrency: number,
  seconds: number,
  body: string,
  headers: Record<string, string>,
): Promise<Figures> {
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let non2xx = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const t = performance.now();
      try {
        const res = await request(url, { method: 'POST', dispatcher: agent, headers, body });
        await res.body.text();
        latencies.push(performance.now() - t);
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        if (res.statusCode < 200 || res.statusCode > 299) non2xx++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - start) / 1000;
  await agent.close();
  const sorted = ascending(latencies);
  return {
    rps: sorted.length / elapsed,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    requests: sorted.length,
    non2xx,
    errors,
    statuses,
  };
}
