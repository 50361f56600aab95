import { connectDatabase, type Sql } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
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
import {
  analyzeConversionTables,
  countEvents,
  drainEvents,
  eventBodies,
  eventJson,
  EVENTS_PATH,
  seedVisits,
  VISIT_USES,
} from './event-traffic.ts';
import { closedLoop, openLoop, type Target } from './load.ts';

/** Traffic before the measured runs, after which the tables are analyzed (see below). */
const PRIMING_EVENTS = 1000;
const PRIMING_RATE = 250;
import { backendsUsed, benchDatabaseBackends, sampleMemory } from './procs.ts';
import { cpuTable, loadTable, ms, pct, table, type Row, type Verdict } from './report.ts';

/**
 * POST /api/v1/events through the gateway, and the time from its 201 to the commission being readable.
 *
 * The events and commissions services run as processes of their own (the production build). Every event names,
 * as cookie_id, a visit of an approved affiliate of the bench merchant (rows inserted the way the events service's
 * insertVisit writes them, each with an IP hash of its own), so each one is attributed and pays a level-0
 * commission. A visit is used at most VISIT_USES times, below the conversion_velocity limit (10 per hour), so no
 * fraud rule fires. Scenarios:
 *
 * - bare express POST /api/v1/events (the same bodies, answered 201 from the parsed JSON): the baseline;
 * - gateway POST /api/v1/events, closed loop: the highest rate (target ≥ 2,000 events/s). The commissions
 *   service works on the backlog meanwhile; the bench waits until every event has been processed, and reports the
 *   rate at which it processed them;
 * - gateway POST /api/v1/events at BENCH_EVENT_RATE (1,000) events/s, open loop: p99 (target ≤ 50 ms); every 10th
 *   event is followed to its commission;
 * - BENCH_EVENT_SAMPLE (500) events at BENCH_EVENT_SAMPLE_RATE (100) events/s, open loop, each followed to its
 *   commission: event-to-commission p50/p99 (target p99 ≤ 1 s).
 *
 * "Readable" is polled in the commissions table (the level-0 row of the event, by the commissions_event_level
 * index, every 10 ms over a connection of its own), which is what GET /api/v1/commissions reads; the time is from
 * the moment the 201 was complete at the client to the start of the first poll that found the row.
 */

const TARGET_EVENTS_PER_S = 2000;
const TARGET_P99_MS = 50;
const TARGET_COMMISSION_P99_MS = 1000;
/** During the open loop at BENCH_EVENT_RATE, every n-th event is followed to its commission. */
const FOLLOW_EVERY = 10;
const POLL_MS = 10;
/**
 * Postgres CPU of the bench database's backends only (a part of postgres*, which counts every postgres process on
 * the machine, other users of the server included): what the gateway, events and commissions services' statements
 * cost, comparable between runs on a shared machine.
 */
const BENCH_DB_COLUMN = 'postgres, bench db';
/** An event whose commission is not readable after this long counts as missing. */
const COMMISSION_GIVE_UP_MS = 60_000;

const eventSettings = () => ({
  rate: intEnv('BENCH_EVENT_RATE', 1000, 1),
  sample: intEnv('BENCH_EVENT_SAMPLE', 500, 1),
  sampleRate: intEnv('BENCH_EVENT_SAMPLE_RATE', 100, 1),
});

export async function runEvents(ctx: BenchContext): Promise<PartResult> {
  const { log, settings } = ctx;
  const s = eventSettings();

  const events = await ctx.service('events');
  const commissions = await ctx.service('commissions');

  // ---- visits ---------------------------------------------------------------------------------------------------
  // Enough for the priming, a closed loop of up to 6,000 events/s over warm-up and duration, the open loop and the sample.
  const capacity =
    PRIMING_EVENTS + (settings.warmup + settings.duration) * 6000 + s.rate * settings.duration + s.sample;
  const t0 = performance.now();
  const visits = await seedVisits(ctx.sql, ctx.merchantId, Math.ceil(capacity / VISIT_USES));
  log(`inserted ${visits.length} visits of approved affiliates in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const eventBody = eventBodies(visits, `ord-${ctx.runId}-`, log);
  // The baseline gets bodies of the same shape and size; it stores nothing, so a fixed visit id does.
  const fakeVisit = newId('vis');
  let b = 0;
  const bareBody = () => eventJson(`ord-${ctx.runId}-b${b++}`, fakeVisit, b);
  const targets = {
    bare: { base: ctx.bareUrl, method: 'POST', path: EVENTS_PATH, keys: ctx.keys, body: bareBody },
    events: { base: ctx.gatewayUrl, method: 'POST', path: EVENTS_PATH, keys: ctx.keys, body: eventBody },
  } satisfies Record<string, Target>;

  // A first event through the whole chain: the services answer, the event is attributed and pays a commission.
  const probe = await postEvent(ctx, eventBody());
  const seen = await readableCommission(ctx.sql, ctx.merchantId, probe.id, 30_000);
  if (!seen)
    throw new Error(`no commission for the first event ${probe.id} within 30 s (attributed_by ${probe.attributed_by})`);

  // A database that has been running has statistics on its tables (autovacuum analyzes them; see migration 008).
  // This one is minutes old: without them the planner takes the event and commission tables for a handful of rows
  // and its generic plans scan every row of the merchant where they should look one up (the commissions service's
  // revenue update, this bench's own commission poller), which measures the newness of the database. So some
  // traffic first (PRIMING_EVENTS at PRIMING_RATE), then ANALYZE, as autovacuum would have done.
  await openLoop(targets.events, {
    connections: settings.connections,
    duration: PRIMING_EVENTS / PRIMING_RATE,
    rate: PRIMING_RATE,
  });
  await drainEvents(log, countEvents(ctx.sql, ctx.merchantId));
  await analyzeConversionTables(ctx.sql);

  const processes = [ctx.gateway, events, commissions, ctx.bare];
  const m = measurer(ctx, processes);
  // m.timed with the bench database's backends measured over the same run.
  const timedWithBackends = async (run: () => Promise<Measured['figures']>): Promise<Measured> => {
    const backendsBefore = await benchDatabaseBackends(ctx.sql);
    const measured = await m.timed(run);
    measured.cpu[BENCH_DB_COLUMN] = backendsUsed(backendsBefore, await benchDatabaseBackends(ctx.sql));
    return measured;
  };
  const idle = idleMemory([events, commissions]);
  const memory = sampleMemory([events, commissions]);
  const counts = countEvents(ctx.sql, ctx.merchantId);

  // ---- closed loop: the highest rate -------------------------------------------------------------------------
  const bare = await m.closed('bare express POST /api/v1/events', targets.bare);
  const before = await counts();
  const loopStart = performance.now();
  const closedName = 'gateway POST /api/v1/events';
  if (settings.warmup > 0) {
    log(`${closedName}: warm-up ${settings.warmup} s`);
    await closedLoop(targets.events, { connections: settings.connections, duration: settings.warmup });
  }
  log(`${closedName}: ${settings.duration} s, ${settings.connections} connections`);
  const closed = await timedWithBackends(() =>
    closedLoop(targets.events, { connections: settings.connections, duration: settings.duration }),
  );
  log(
    `${closedName}: ${closed.figures.rps.toFixed(0)} req/s, p50 ${closed.figures.p50} ms, p99 ${closed.figures.p99} ms`,
  );
  const atEnd = await counts();
  const backlog = atEnd.recorded - atEnd.processed;
  log(`commissions: ${backlog} events not yet processed when the closed loop ended; waiting`);
  const drained = await drainEvents(log, counts);
  const processedRate = (drained.counts.processed - before.processed) / ((drained.at - loopStart) / 1000);

  // ---- open loop at BENCH_EVENT_RATE, every 10th event followed to its commission ------------------------------
  const followLoad = commissionFollower(ctx.databaseUrl, ctx.merchantId);
  log(
    `gateway POST /api/v1/events at ${s.rate} events/s, open loop: ${settings.duration} s (every ${FOLLOW_EVERY}th event followed to its commission)`,
  );
  const atRate = await timedWithBackends(() =>
    openLoop(targets.events, {
      connections: settings.connections,
      duration: settings.duration,
      rate: s.rate,
      wantBody: (i) => i % FOLLOW_EVERY === 0,
      onResponse: (i, status, text, at) => {
        if (status === 201 && i % FOLLOW_EVERY === 0) followLoad.add(text, at);
      },
    }),
  );
  log(
    `at ${s.rate} events/s: ${atRate.figures.rps.toFixed(0)} req/s, p50 ${atRate.figures.p50.toFixed(1)} ms, p99 ${atRate.figures.p99.toFixed(1)} ms`,
  );
  const underLoad = await followLoad.finish();
  await drainEvents(log, counts);

  // ---- the sample at a steady rate, each event followed -------------------------------------------------------
  const followSample = commissionFollower(ctx.databaseUrl, ctx.merchantId);
  log(`event → commission: ${s.sample} events at ${s.sampleRate} events/s, open loop`);
  const sampleRun = await timedWithBackends(() =>
    openLoop(targets.events, {
      connections: settings.connections,
      duration: s.sample / s.sampleRate,
      rate: s.sampleRate,
      onResponse: (_i, status, text, at) => {
        if (status === 201) followSample.add(text, at);
      },
    }),
  );
  const sample = await followSample.finish();
  log(
    `event → commission: p50 ${sample.p50.toFixed(1)} ms, p99 ${sample.p99.toFixed(1)} ms over ${sample.found} events`,
  );
  memory.stop();

  // ---- report ---------------------------------------------------------------------------------------------------
  const loadRows: Row[] = [
    { scenario: 'bare express POST /api/v1/events (201 echo)', ...bare },
    { scenario: 'gateway POST /api/v1/events', ...closed, baseline: bare.figures.rps },
    { scenario: `gateway POST /api/v1/events at ${s.rate}/s, open loop`, ...atRate, baseline: bare.figures.rps },
    {
      scenario: `gateway POST /api/v1/events at ${s.sampleRate}/s, open loop (sample)`,
      ...sampleRun,
      baseline: bare.figures.rps,
    },
  ];
  const followedRows: [string, Followed][] = [
    [`${s.sample} events at ${s.sampleRate}/s`, sample],
    [`every ${FOLLOW_EVERY}th event at ${s.rate}/s`, underLoad],
  ];
  const latencyTable = table(
    ['event → commission readable', 'events followed', 'p50 ms', 'p99 ms', 'max ms', 'not readable within 60 s'],
    followedRows.map(([label, r]) => [label, String(r.found), ms(r.p50), ms(r.p99), ms(r.max), String(r.missing)]),
    ['l', 'r', 'r', 'r', 'r', 'r'],
  );
  const columns = ['gateway', 'events', 'commissions', 'bare-express', 'load generator', 'postgres*', 'nats-server*'];
  const backendRows = loadRows.filter((r) => r.cpu[BENCH_DB_COLUMN] != null);
  const backendTable = table(
    ['Postgres CPU µs per event, backends of the bench database only', 'µs'],
    backendRows.map((r) => [
      r.scenario,
      ((r.cpu[BENCH_DB_COLUMN]! / Math.max(1, r.figures.requests)) * 1e6).toFixed(0),
    ]),
    ['l', 'r'],
  );
  const allAnswered = (x: Measured, expected: number) =>
    x.figures.requests === expected && x.figures.non2xx === 0 && x.figures.errors === 0;
  const rateAnswered = allAnswered(atRate, Math.round(s.rate * settings.duration));
  const verdicts: Verdict[] = [
    {
      target: `POST /api/v1/events ≥ ${TARGET_EVENTS_PER_S.toLocaleString('en')} events/s`,
      measured: `${closed.figures.rps.toFixed(0)} events/s (${pct(closed.figures.rps / bare.figures.rps)} of bare express ${bare.figures.rps.toFixed(0)} req/s)${closed.figures.non2xx ? `, ${closed.figures.non2xx} non-2xx` : ''}`,
      pass: closed.figures.rps >= TARGET_EVENTS_PER_S && closed.figures.non2xx === 0 && closed.figures.errors === 0,
    },
    {
      target: `POST /api/v1/events p99 ≤ ${TARGET_P99_MS} ms at ${s.rate.toLocaleString('en')} events/s`,
      measured: `p99 ${atRate.figures.p99.toFixed(1)} ms, ${atRate.figures.rps.toFixed(0)} events/s achieved${rateAnswered ? '' : ', not every request answered 2xx'}`,
      pass: atRate.figures.p99 <= TARGET_P99_MS && rateAnswered,
    },
    {
      target: `event → commission readable p99 ≤ ${TARGET_COMMISSION_P99_MS / 1000} s (${s.sample} events at ${s.sampleRate}/s)`,
      measured: `p99 ${sample.p99.toFixed(0)} ms (p50 ${sample.p50.toFixed(0)} ms)${sample.missing ? `, ${sample.missing} never readable` : ''}`,
      pass: sample.p99 <= TARGET_COMMISSION_P99_MS && sample.missing === 0 && sample.found > 0,
    },
    {
      target: `event → commission readable p99 ≤ ${TARGET_COMMISSION_P99_MS / 1000} s (every ${FOLLOW_EVERY}th event at ${s.rate}/s)`,
      measured: `p99 ${underLoad.p99.toFixed(0)} ms (p50 ${underLoad.p50.toFixed(0)} ms)${underLoad.missing ? `, ${underLoad.missing} never readable` : ''}`,
      pass: underLoad.p99 <= TARGET_COMMISSION_P99_MS && underLoad.missing === 0 && underLoad.found > 0,
    },
  ];
  const section = [
    loadTable(loadRows),
    '',
    latencyTable,
    '',
    `Commissions service: ${backlog} events were still unprocessed when the closed loop ended; ` +
      `it processed ${drained.counts.processed - before.processed} conversions in ${((drained.at - loopStart) / 1000).toFixed(1)} s from the start of the loop, ` +
      `${processedRate.toFixed(0)}/s${drained.complete ? '' : ' (gave up waiting: not every event was processed)'}.`,
    '',
    cpuTable(loadRows, columns, 'event'),
    '',
    backendTable,
  ].join('\n');

  return {
    section,
    memRows: memoryRows(
      [
        { child: events, target: true },
        { child: commissions, target: true },
      ],
      idle,
      memory.peak,
    ),
    verdicts,
  };
}

async function postEvent(ctx: BenchContext, json: string): Promise<{ id: string; attributed_by: string | null }> {
  const res = await fetch(ctx.gatewayUrl + EVENTS_PATH, {
    method: 'POST',
    headers: { authorization: `Bearer ${ctx.keys[0]}`, 'content-type': 'application/json' },
    body: json,
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`POST ${EVENTS_PATH} answered ${res.status}: ${text}`);
  const event = JSON.parse(text) as { id: string; attributed_by: string | null };
  if (event.attributed_by !== 'cookie') throw new Error(`the event was not attributed by its cookie: ${text}`);
  return event;
}

async function readableCommission(sql: Sql, merchantId: string, eventId: string, timeoutMs: number): Promise<boolean> {
  return waitUntil(
    async () => {
      const rows =
        await sql`select 1 from commissions where merchant_id = ${merchantId} and event_id = ${eventId} and level = 0`;
      return rows.length > 0;
    },
    timeoutMs,
    50,
  );
}

interface Followed {
  found: number;
  missing: number;
  p50: number;
  p99: number;
  max: number;
}

/**
 * Follows created events to their level-0 commission: `add` takes the 201 body and when it was complete; a loop
 * polls the commissions table every POLL_MS for the events not seen yet (one query for all of them) and records,
 * per event, the start of the poll that found it minus the 201's time. Its own connection, so the load's pools
 * never wait for it.
 */
function commissionFollower(databaseUrl: string, merchantId: string) {
  // Generic plans on this connection: left to choose, Postgres planned the poll afresh on every call (planning
  // costing several times the execution, CPU taken from what is measured), since the generic plan costs the unnest
  // at ten rows. Either plan is one probe of the unique index per event.
  const sql = connectDatabase(databaseUrl, { max: 1, applicationName: 'bench-commission-poller', genericPlans: true });
  const pending = new Map<string, number>();
  const latencies: number[] = [];
  let open = true;
  const loop = (async () => {
    while (open || pending.size > 0) {
      if (pending.size > 0) {
        const asked = performance.now();
        const ids = [...pending.keys()];
        // One index probe per followed event (unique (merchant_id, event_id, level)), whatever the table's size.
        const rows = await sql<{ event_id: string }[]>`
          select c.event_id from unnest(${ids}::text[]) as f(event_id)
          join commissions c on c.merchant_id = ${merchantId} and c.event_id = f.event_id and c.level = 0`;
        for (const r of rows) {
          const at = pending.get(r.event_id);
          if (at === undefined) continue;
          latencies.push(asked - at);
          pending.delete(r.event_id);
        }
        // Give up on events older than the limit, so that one lost event does not keep the loop alive.
        for (const [id, at] of pending) if (asked - at > COMMISSION_GIVE_UP_MS) pending.delete(id);
      }
      await sleep(POLL_MS);
    }
  })();
  let added = 0;
  return {
    add(text: string, at: number) {
      try {
        const id = (JSON.parse(text) as { id?: unknown }).id;
        if (typeof id === 'string') {
          pending.set(id, at);
          added++;
        }
      } catch {
        // not an event: ignored
      }
    },
    async finish(): Promise<Followed> {
      open = false;
      await loop;
      await sql.end({ timeout: 2 });
      const sorted = ascending(latencies);
      return {
        found: sorted.length,
        missing: added - sorted.length,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        max: sorted.length ? sorted[sorted.length - 1]! : NaN,
      };
    },
  };
}
