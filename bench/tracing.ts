import postgres from 'postgres';
import { connectDatabase } from '@platform/shared/db';
import { migrate } from '@platform/shared/migrate';
import { jetstreamManager } from '@nats-io/jetstream';
import { ensureDatabase, freePort } from '../scripts/infra.ts';
import { intEnv, sleep, type BenchContext, type PartResult } from './context.ts';
import {
  analyzeConversionTables,
  countEvents,
  drainEvents,
  eventBodies,
  EVENTS_PATH,
  seedVisits,
  VISIT_USES,
} from './event-traffic.ts';
import { openLoop } from './load.ts';
import { cpuMeter, serviceEntry, startChild, waitFor, type Child } from './procs.ts';
import { ms, pct, table, type Verdict } from './report.ts';
import { seedMerchant } from './seed.ts';

/** The most CPU per event tracing at ratio 0.1 may add to tracing off (gateway, events and commissions together). */
const TARGET_OVERHEAD = 0.1;
const SERVICES = ['gateway', 'events', 'commissions'] as const;

/**
 * What tracing costs: POST /api/v1/events at a steady rate (BENCH_TRACING_RATE, 400 events/s, open loop) with
 * tracing off, on at sampling ratio 0.1 and at 1.0, in the same run, BENCH_TRACING_ROUNDS (3) times in turn, each
 * round starting with the next setting (the figures are the rounds' sums). Each setting gets fresh gateway, events
 * and commissions processes (the production build) on a NATS prefix of its own and a database of this part's own
 * (so that no other part's relay takes its outbox rows); with tracing on they export OTLP/HTTP (http/protobuf, the
 * default protocol) to a sink in a process of its own (bench/otlp-sink.ts), the sampler parentbased_traceidratio.
 * CPU is the three services' own (/proc), from the start of the measured loop until every event's commission is
 * recorded, divided by the events sent. Target: ratio 0.1 costs at most 10 % more CPU per event than tracing off.
 */
export async function runTracing(ctx: BenchContext): Promise<PartResult> {
  const { log, settings } = ctx;
  const rate = intEnv('BENCH_TRACING_RATE', 400, 1);
  const rounds = intEnv('BENCH_TRACING_ROUNDS', 3, 1);
  const dbName = `bench_${ctx.runId}_tracing`;
  const databaseUrl = await ensureDatabase(ctx.adminUrl, dbName);
  const sql = connectDatabase(databaseUrl, { max: 2, applicationName: 'bench-tracing' });
  const sink = await startSink(ctx);
  try {
    await migrate(sql);
    const { merchantId, keys } = await seedMerchant(sql, { affiliates: 1000, keys: ctx.keys.length });
    const perSetting = (settings.warmup + settings.duration) * rate;
    const visits = await seedVisits(sql, merchantId, Math.ceil((3 * rounds * perSetting + 500) / VISIT_USES));
    const body = eventBodies(visits, `trc-${ctx.runId}-`, log);
    const counts = countEvents(sql, merchantId);

    const settingsToRun: { label: string; env: Record<string, string> }[] = [
      { label: 'tracing off', env: {} },
      ...[0.1, 1].map((ratio) => ({
        label: `tracing on, ratio ${ratio}`,
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
          OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
          OTEL_TRACES_SAMPLER_ARG: String(ratio),
        },
      })),
    ];
    // Interleaved rounds: a machine whose load drifts during the run moves every setting's figures alike.
    const results = settingsToRun.map((setting) => ({
      label: setting.label,
      requests: 0,
      failed: 0,
      rps: 0,
      p99: 0,
      exports: 0,
      cpu: Object.fromEntries(SERVICES.map((s) => [s, 0])) as Record<(typeof SERVICES)[number], number>,
    }));
    for (let round = 1; round <= rounds; round++) {
      // Each round starts with another setting: what drifts within a round (tables growing, the machine's load)
      // falls on each setting alike.
      for (let k = 0; k < settingsToRun.length; k++) {
        const i = (k + round - 1) % settingsToRun.length;
        const setting = settingsToRun[i]!;
        const r = results[i]!;
        const prefix = `${ctx.prefix}tr${round}${i}`;
        const services = await startServices(ctx, databaseUrl, prefix, setting.env);
        try {
          const target = { base: services.url, method: 'POST' as const, path: EVENTS_PATH, keys, body };
          log(`${setting.label}, round ${round}: warm-up ${settings.warmup} s at ${rate} events/s`);
          await openLoop(target, { connections: settings.connections, duration: settings.warmup, rate });
          await drainEvents(log, counts);
          if (round === 1 && k === 0) await analyzeConversionTables(sql);
          const meter = cpuMeter(services.children);
          const exportsBefore = await sink.stats();
          const before = meter.snapshot();
          log(`${setting.label}, round ${round}: ${settings.duration} s at ${rate} events/s, open loop`);
          const figures = await openLoop(target, {
            connections: settings.connections,
            duration: settings.duration,
            rate,
          });
          await drainEvents(log, counts);
          const used = meter.since(before);
          // Spans still buffered leave within the exporter's delay (5 s): wait for it before counting the exports.
          if (setting.env['OTEL_EXPORTER_OTLP_ENDPOINT']) await sleep(5500);
          r.exports += (await sink.stats()).requests - exportsBefore.requests;
          for (const s of SERVICES) r.cpu[s] += used[s] ?? NaN;
          r.requests += figures.requests;
          r.failed += figures.non2xx + figures.errors;
          r.rps += figures.rps / rounds;
          r.p99 = Math.max(r.p99, figures.p99);
          log(`${setting.label}, round ${round}: p99 ${figures.p99.toFixed(1)} ms`);
        } finally {
          await services.stop();
          await deleteStreams(ctx, prefix);
        }
      }
    }

    const perEvent = (r: (typeof results)[number], s?: (typeof SERVICES)[number]) =>
      ((s ? r.cpu[s] : SERVICES.reduce((sum, x) => sum + r.cpu[x], 0)) / Math.max(1, r.requests)) * 1e6;
    const versus = (r: (typeof results)[number]) => {
      const ratio = perEvent(r) / perEvent(off) - 1;
      return `${ratio >= 0 ? '+' : ''}${pct(ratio)}`;
    };
    const off = results[0]!;
    const section = table(
      [
        'POST /api/v1/events',
        'events/s',
        'p99 ms',
        'non-2xx',
        ...SERVICES.map((s) => `${s} µs/event`),
        'total µs/event',
        'vs off',
        'OTLP exports',
      ],
      results.map((r) => [
        r.label,
        r.rps.toFixed(0),
        ms(r.p99),
        String(r.failed),
        ...SERVICES.map((s) => perEvent(r, s).toFixed(0)),
        perEvent(r).toFixed(0),
        r === off ? '' : versus(r),
        String(r.exports),
      ]),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    );
    const tenth = results[1]!;
    const verdicts: Verdict[] = [
      {
        target: `tracing at ratio 0.1 ≤ ${pct(TARGET_OVERHEAD)} more CPU per POST /api/v1/events than tracing off`,
        measured: `${versus(tenth)} (${perEvent(tenth).toFixed(0)} vs ${perEvent(off).toFixed(0)} µs per event, gateway + events + commissions, ${rounds} rounds)`,
        pass: perEvent(tenth) <= (1 + TARGET_OVERHEAD) * perEvent(off) && results.every((r) => r.failed === 0),
      },
    ];
    return { section, memRows: [], verdicts };
  } finally {
    await sink.child.stop();
    await sql.end({ timeout: 2 });
    const admin = postgres(ctx.adminUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists "${dbName}" with (force)`).catch(() => {});
    await admin.end();
  }
}

/** The OTLP sink (bench/otlp-sink.ts): its URL, and its counts on demand. */
async function startSink(ctx: BenchContext) {
  const child = ctx.adopt(startChild('otlp sink', 'bench/otlp-sink.ts', {}, { flagsOf: 'gateway', ipc: true }));
  const port = await new Promise<number>((resolve, reject) => {
    child.proc.once('message', (m: { port: number }) => resolve(m.port));
    child.proc.once('exit', (code) =>
      reject(new Error(`the OTLP sink exited with ${code}:\n${child.output.join('\n')}`)),
    );
  });
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    stats: () =>
      new Promise<{ requests: number; bytes: number }>((resolve) => {
        child.proc.once('message', resolve);
        child.proc.send({});
      }),
  };
}

/** The gateway, events and commissions services of one setting, ready; `stop` ends them. */
async function startServices(ctx: BenchContext, databaseUrl: string, prefix: string, env: Record<string, string>) {
  const children: Child[] = [];
  const port = await freePort();
  for (const name of SERVICES) {
    const ops = await freePort();
    const child = ctx.adopt(
      startChild(
        name,
        serviceEntry(name),
        {
          APP_ENV: 'development',
          DATABASE_URL: databaseUrl,
          NATS_URL: ctx.natsUrl,
          NATS_PREFIX: prefix,
          LOG_LEVEL: 'warn',
          HOST: '127.0.0.1',
          PORT: String(port),
          OPS_PORT: String(ops),
          // The reconciler would walk the rows of the settings before this one once they pass its horizon: work
          // that depends on the order of the settings, not on tracing.
          CONVERSION_RECONCILE_AFTER_MS: '86400000',
          ...env,
        },
        { flagsOf: name },
      ),
    );
    children.push(child);
    await waitFor(child, 'readiness', async () => (await fetch(`http://127.0.0.1:${ops}/readyz`)).ok);
  }
  return {
    children,
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      for (const c of children.reverse()) await c.stop();
    },
  };
}

async function deleteStreams(ctx: BenchContext, prefix: string): Promise<void> {
  const jsm = await jetstreamManager(ctx.nc);
  for await (const s of jsm.streams.list())
    if (s.config.name.startsWith(`${prefix.toUpperCase()}_`)) await jsm.streams.delete(s.config.name).catch(() => {});
}
