import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { connectDatabase } from '@platform/shared/db';
import { migrate } from '@platform/shared/migrate';
import { connectNats } from '@platform/shared/nats';
import { ensureDatabase, ensureInfra, freePort } from '../scripts/infra.ts';
import { argsEnv, intEnv, settingsEnv } from './context.ts';
import {
  analyzeConversionTables,
  countEvents,
  drainEvents,
  eventBodies,
  EVENTS_PATH,
  seedVisits,
  VISIT_USES,
} from './event-traffic.ts';
import { closedLoop, openLoop, type Target } from './load.ts';
import { buildServices, cpuMeter, readMemory, serviceEntry, startChild, waitFor, type Child } from './procs.ts';
import { mb } from './report.ts';
import { holdRunResources } from './resources.ts';
import { seedMerchant } from './seed.ts';

/**
 * `npm run bench:ab`: two stacks that differ only in their build, node flags or settings, side by side on one
 * database, one NATS server and one machine. The same load goes to one stack, then the other, in short rounds
 * (A B, then B A, …), so that the machine's drift and the neighbours' noise fall on both alike. Prints each
 * process's CPU per request for every round, their means with the spread of the rounds, B against A, each
 * service's full and young-generation garbage collections per 1,000 requests, and each process's peak RSS. For
 * differences too small for `npm run bench` to tell from the machine's noise: its runs follow one another, and this
 * machine's speed changes between them by more than most changes do.
 *
 * Parts (BENCH_AB_PART):
 * - `affiliates` (default): gateway + affiliates stacks; an open-loop GET of BENCH_AB_PATH
 *   (/api/v1/affiliates?limit=25; any GET the gateway and the affiliates service answer alone).
 * - `events`: gateway + events + commissions stacks; POST /api/v1/events with the bodies of `npm run bench`'s
 *   events part (bench/event-traffic.ts: every event attributed by its cookie, one commission each). A round's
 *   CPU is counted until the commissions service has processed every event recorded so far, so each round carries
 *   the commission work of its own events. After the warm-ups the conversion tables are analyzed, as the events
 *   part does after its priming.
 *
 * Load (BENCH_AB_LOAD): `open` (default for affiliates) sends BENCH_AB_RATE requests/s (500 for affiliates, 1,000
 * for events: below what one stack sustains, so both do the same work at the same rate; the CPU per request is
 * higher than in a closed loop, as fewer requests share a socket write or a statement, but compares like with
 * like); `closed` (default for events) runs BENCH_CONNECTIONS connections back to back, and the rounds' request
 * rates are compared too: what the target of 2,000 events/s is judged on.
 *
 * Environment: BENCH_AB_A_NODE_ARGS and BENCH_AB_B_NODE_ARGS (node flags of each stack's services, after the usual
 * ones of scripts/runtime.ts), BENCH_AB_A_ENV and BENCH_AB_B_ENV (NAME=value … for each stack's services),
 * BENCH_AB_A_DIST and BENCH_AB_B_DIST (another build's dist directory, to compare code: a checkout of another commit
 * with its own node_modules, `npm run build` done there, and the same migrations; default this checkout's),
 * BENCH_AB_ROUNDS (rounds per stack, 6), BENCH_AB_ROUND (s, 4), BENCH_AB_WARMUP (s per stack, 8),
 * BENCH_CONNECTIONS (32), BENCH_KEYS (32), BENCH_AFFILIATES (20000).
 */

const part = process.env['BENCH_AB_PART'] || 'affiliates';
if (part !== 'affiliates' && part !== 'events')
  throw new Error(`BENCH_AB_PART must be affiliates or events (got ${part})`);
const loadKind = process.env['BENCH_AB_LOAD'] || (part === 'events' ? 'closed' : 'open');
if (loadKind !== 'open' && loadKind !== 'closed')
  throw new Error(`BENCH_AB_LOAD must be open or closed (got ${loadKind})`);
const settings = {
  rate: intEnv('BENCH_AB_RATE', part === 'events' ? 1000 : 500, 1),
  rounds: intEnv('BENCH_AB_ROUNDS', 6, 1),
  round: intEnv('BENCH_AB_ROUND', 4, 1),
  warmup: intEnv('BENCH_AB_WARMUP', 8, 0),
  path: part === 'events' ? EVENTS_PATH : process.env['BENCH_AB_PATH'] || '/api/v1/affiliates?limit=25',
  connections: intEnv('BENCH_CONNECTIONS', 32, 1),
  keys: intEnv('BENCH_KEYS', 32, 1),
  affiliates: intEnv('BENCH_AFFILIATES', 20_000, 26),
};
const variants = (['a', 'b'] as const).map((tag) => {
  const name = `BENCH_AB_${tag.toUpperCase()}`;
  const dist = process.env[`${name}_DIST`];
  return {
    tag,
    nodeArgs: argsEnv(`${name}_NODE_ARGS`),
    env: settingsEnv(`${name}_ENV`),
    dist: dist ? resolve(dist) : undefined,
  };
});
/** The services of each stack, in the order they start (the gateway last), and the shared processes measured. */
const SERVICES = part === 'events' ? (['events', 'commissions'] as const) : (['affiliates'] as const);
const SHARED = part === 'events' ? (['postgres*', 'nats-server*'] as const) : (['postgres*'] as const);
const NAMES = ['gateway', ...SERVICES];
const PROCESSES = [...NAMES, ...SHARED];
/** Events a closed-loop round may send at most, per second, for sizing the visits (above any rate seen here). */
const MAX_EVENTS_PER_S = 4000;

const log = (line: string) => process.stderr.write(`bench:ab: ${line}\n`);
const runId = randomBytes(4).toString('hex');
const dbName = `bench_ab_${runId}`;
const prefixOf = (tag: string) => `benchab${runId}${tag}`;

const run = holdRunResources(log);
for (const v of variants) run.prefixes.push(prefixOf(v.tag));

const describe = (v: (typeof variants)[number]) =>
  [
    ...(v.dist ? [`build ${v.dist}`] : []),
    ...v.nodeArgs,
    ...Object.entries(v.env).map(([k, val]) => `${k}=${val}`),
  ].join(' ') || '(defaults)';

async function main(): Promise<void> {
  const infra = (run.infra = await ensureInfra({ purpose: 'bench', log }));
  const databaseUrl = await ensureDatabase(infra.adminUrl, dbName);
  run.database = dbName;
  const sql = (run.sql = connectDatabase(databaseUrl, {
    max: 2,
    applicationName: 'bench:ab',
    statementTimeoutMs: 0,
    lockTimeoutMs: 0,
  }));
  await migrate(sql);
  // Connected for the clean-up: the services create their streams, the run deletes them.
  run.nc = await connectNats(infra.natsUrl, 'bench:ab');
  const { merchantId, keys } = await seedMerchant(sql, { affiliates: settings.affiliates, keys: settings.keys });
  if (variants.some((v) => !v.dist)) buildServices();

  // What one request sends: the GET, or a fresh event body (one sequence for both stacks).
  let body: (() => string) | undefined;
  let counts: ReturnType<typeof countEvents> | undefined;
  if (part === 'events') {
    const perSecond = loadKind === 'open' ? settings.rate : MAX_EVENTS_PER_S;
    const capacity = 2 * (settings.warmup + settings.rounds * settings.round) * perSecond + 1;
    const visits = await seedVisits(sql, merchantId, Math.ceil(capacity / VISIT_USES));
    log(`inserted ${visits.length} visits`);
    body = eventBodies(visits, `ord-${runId}-`, log);
    counts = countEvents(sql, merchantId);
  }
  const method = body ? 'POST' : 'GET';
  const target = (base: string): Target => ({ base, method, path: settings.path, keys, ...(body ? { body } : {}) });
  const answered = async (base: string) => {
    const res = await fetch(base + settings.path, {
      method,
      headers: { authorization: `Bearer ${keys[0]}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: body() } : {}),
    });
    return res.status === (body ? 201 : 200);
  };

  type Stack = (typeof variants)[number] & {
    base: string;
    processes: Record<string, Child>;
    /** Each service's ops port, for its garbage-collection counts. */
    opsPorts: Record<string, number>;
    cpu: Record<string, number[]>;
    /** Each service's full and young-generation collections per 1,000 requests, per round. */
    gc: Record<string, { major: number[]; minor: number[] }>;
    rates: number[];
    p99s: number[];
  };
  const stacks: Stack[] = [];
  for (const v of variants) {
    const common = {
      ...v.env,
      APP_ENV: 'development',
      DATABASE_URL: databaseUrl,
      NATS_URL: infra.natsUrl,
      NATS_PREFIX: prefixOf(v.tag),
      LOG_LEVEL: 'warn',
    };
    const processes: Record<string, Child> = {};
    const opsPorts: Record<string, number> = {};
    for (const service of SERVICES) {
      const ops = (opsPorts[service] = await freePort());
      const child = startChild(
        `${service} ${v.tag}`,
        serviceEntry(service, v.dist),
        { ...common, OPS_PORT: String(ops) },
        {
          flagsOf: service,
          nodeArgs: v.nodeArgs,
        },
      );
      run.children.push(child);
      await waitFor(child, 'readiness', async () => (await fetch(`http://127.0.0.1:${ops}/readyz`)).ok);
      processes[service] = child;
    }
    const [port, ops] = [await freePort(), await freePort()];
    const gateway = startChild(
      `gateway ${v.tag}`,
      serviceEntry('gateway', v.dist),
      { ...common, HOST: '127.0.0.1', PORT: String(port), OPS_PORT: String(ops) },
      {
        flagsOf: 'gateway',
        nodeArgs: v.nodeArgs,
      },
    );
    run.children.push(gateway);
    processes['gateway'] = gateway;
    opsPorts['gateway'] = ops;
    const base = `http://127.0.0.1:${port}`;
    await waitFor(gateway, 'a first answer', () => answered(base));
    // CPU µs per request of each process, the request rate and the p99, per round.
    const cpu = Object.fromEntries(PROCESSES.map((p) => [p, [] as number[]]));
    const gc = Object.fromEntries(NAMES.map((n) => [n, { major: [] as number[], minor: [] as number[] }]));
    stacks.push({ ...v, base, processes, opsPorts, cpu, gc, rates: [], p99s: [] });
  }
  const loadLine =
    loadKind === 'open' ? `at ${settings.rate}/s, open loop` : `closed loop, ${settings.connections} connections`;
  log(
    `A: ${describe(variants[0]!)}; B: ${describe(variants[1]!)}; ${method} ${settings.path} ${loadLine}, ${settings.rounds} rounds of ${settings.round} s each`,
  );

  const meter = cpuMeter(run.children);
  const load = (base: string, duration: number) =>
    loadKind === 'open'
      ? openLoop(target(base), {
          connections: settings.connections,
          duration,
          rate: settings.rate,
          wantBody: () => false,
        })
      : closedLoop(target(base), { connections: settings.connections, duration });
  // Until the commissions service has caught up: its work on a round's events belongs to that round.
  const caughtUp = async () => {
    if (counts && !(await drainEvents(log, counts)).complete)
      throw new Error('the commissions service did not catch up');
  };
  for (const s of stacks) if (settings.warmup > 0) await load(s.base, settings.warmup);
  await caughtUp();
  // As the events part does after its priming, for the reason given there.
  if (part === 'events') await analyzeConversionTables(sql);

  for (let round = 0; round < settings.rounds; round++) {
    for (const s of round % 2 === 0 ? stacks : [...stacks].reverse()) {
      // The collections are read outside the CPU's window: rendering the metrics costs the service a little.
      const gcBefore = await Promise.all(NAMES.map((n) => gcCounts(s.opsPorts[n]!)));
      const before = meter.snapshot();
      const figures = await load(s.base, settings.round);
      await caughtUp();
      const used = meter.since(before);
      const gcAfter = await Promise.all(NAMES.map((n) => gcCounts(s.opsPorts[n]!)));
      NAMES.forEach((n, i) => {
        s.gc[n]!.major.push(((gcAfter[i]!.major - gcBefore[i]!.major) / figures.requests) * 1000);
        s.gc[n]!.minor.push(((gcAfter[i]!.minor - gcBefore[i]!.minor) / figures.requests) * 1000);
      });
      const line: string[] = [];
      for (const p of PROCESSES) {
        const seconds = p.endsWith('*') ? used[p] : used[s.processes[p]!.name];
        const us = ((seconds ?? NaN) / figures.requests) * 1e6;
        s.cpu[p]!.push(us);
        line.push(`${p} ${us.toFixed(0)}`);
      }
      s.rates.push(figures.rps);
      s.p99s.push(figures.p99);
      const failed = figures.non2xx + figures.errors;
      log(
        `round ${round + 1} ${s.tag.toUpperCase()}: ${figures.rps.toFixed(0)} req/s, p99 ${figures.p99.toFixed(1)} ms${failed ? `, ${failed} failed` : ''}; CPU µs per request: ${line.join(', ')}`,
      );
    }
  }

  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const range = (xs: number[], digits: number) =>
    `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
  // A ratio to zero (a round without a full collection) has no percentage.
  const signed = (x: number) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${x.toFixed(1)} %` : 'n/a');
  // Beside the difference of the means, the spread of B against A within each round (the two halves of a round
  // run back to back, so they share most of the machine's drift): a difference inside it is noise.
  const compare = (label: string, a: number[], b: number[], digits = 0) => {
    const perRound = a.map((x, i) => (b[i]! / x - 1) * 100);
    const spread = `${signed(Math.min(...perRound))} to ${signed(Math.max(...perRound))}`;
    const [meanA, meanB] = [mean(a), mean(b)];
    return `| ${label} | ${meanA.toFixed(digits)} | ${range(a, digits)} | ${meanB.toFixed(digits)} | ${range(b, digits)} | ${signed(((meanB - meanA) / meanA) * 100)} | ${spread} |`;
  };
  const total = (s: Stack) => s.rates.map((_, i) => PROCESSES.reduce((sum, p) => sum + s.cpu[p]![i]!, 0));
  const [a, b] = stacks as [Stack, Stack];
  const out: string[] = [
    '',
    `A: ${describe(a)}`,
    `B: ${describe(b)}`,
    `Load: ${method} ${settings.path} ${loadLine}`,
    '',
  ];
  out.push(
    '| per request | A mean | A rounds | B mean | B rounds | B vs A | B vs A per round |',
    '|:--|--:|--:|--:|--:|--:|--:|',
  );
  if (loadKind === 'closed') out.push(compare('requests/s', a.rates, b.rates));
  for (const p of PROCESSES) out.push(compare(`CPU µs, ${p}`, a.cpu[p]!, b.cpu[p]!));
  out.push(compare('CPU µs, all of these', total(a), total(b)));
  out.push(
    '',
    '| garbage collections per 1,000 requests | A mean | A rounds | B mean | B rounds | B vs A | B vs A per round |',
    '|:--|--:|--:|--:|--:|--:|--:|',
  );
  for (const n of NAMES) {
    out.push(compare(`full, ${n}`, a.gc[n]!.major, b.gc[n]!.major, 1));
    out.push(compare(`young generation, ${n}`, a.gc[n]!.minor, b.gc[n]!.minor, 1));
  }
  out.push(
    '',
    `| stack | p99 ms, per round | ${NAMES.map((n) => `${n} peak RSS`).join(' | ')} |`,
    `|:--|:--|${NAMES.map(() => '--:').join('|')}|`,
  );
  for (const s of stacks) {
    const hwm = (c: Child) => mb(readMemory(c.proc.pid)?.hwm ?? null);
    out.push(
      `| ${s.tag.toUpperCase()} | ${s.p99s.map((v) => v.toFixed(1)).join(', ')} | ${NAMES.map((n) => hwm(s.processes[n]!)).join(' | ')} |`,
    );
  }
  out.push('', '(*) every process of that name on this machine: the other stack is idle while one is measured.');
  console.log(out.join('\n'));
}

/** How many full (mark-compact) and young-generation collections a service has run, from its ops server's /metrics. */
async function gcCounts(opsPort: number): Promise<{ major: number; minor: number }> {
  const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
  const count = (kind: string) =>
    Number(
      new RegExp(`^nodejs_gc_duration_seconds_count\\{[^}]*kind="${kind}"[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN,
    );
  return { major: count('major'), minor: count('minor') };
}

main().then(
  async () => {
    await run.release();
    process.exit(0);
  },
  async (err) => {
    log(`failed: ${(err as Error).stack ?? err}`);
    await run.release().catch(() => {});
    process.exit(1);
  },
);
