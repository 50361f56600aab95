import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { connectDatabase } from '@platform/shared/db';
import { migrate } from '@platform/shared/migrate';
import { connectNats } from '@platform/shared/nats';
import { ensureDatabase, ensureInfra, freePort } from '../scripts/infra.ts';
import {
  BENCH_PARTS,
  argsEnv,
  intEnv,
  settingsEnv,
  type BenchContext,
  type BenchPart,
  type PartResult,
  type ServiceName,
} from './context.ts';
import { runAnalytics } from './analytics.ts';
import { runEvents } from './events.ts';
import { closedLoop, openLoop, type Figures, type Target } from './load.ts';
import {
  ROOT,
  buildServices,
  cpuMeter,
  readMemory,
  sampleMemory,
  serviceEntry,
  startChild,
  waitFor,
  type Child,
  type CpuColumn,
} from './procs.ts';
import { summariseProfile } from './profile.ts';
import {
  cpuTable,
  loadTable,
  mb,
  memoryTable,
  pct,
  verdictTable,
  writeFigures,
  type MemoryRow,
  type Row,
  type Verdict,
} from './report.ts';
import { holdRunResources } from './resources.ts';
import { seedMerchant } from './seed.ts';
import { runDashboard } from './dashboard.ts';
import { runPayments } from './payments.ts';
import { runTracing } from './tracing.ts';
import { runWebhooks } from './webhooks.ts';

/**
 * `npm run bench`: the gateway and the affiliates service as separate processes on a fresh database and NATS
 * prefix, measured with autocannon against a bare express server answering the same bytes from memory, in the
 * same run on the same machine, and against the floor of the design (bench/floor-hop.ts: the gateway's hops with
 * nothing else done). Prints the figures, PASS/MISS per target and each process's peak RSS, and writes
 * them into docs/PERFORMANCE.md. Exits 0 whether or not the targets are met (1 only when the run itself fails).
 *
 * Environment: BENCH_DURATION (s, 10), BENCH_WARMUP (s, 2), BENCH_CONNECTIONS (32), BENCH_KEYS (32),
 * BENCH_AFFILIATES (100000), BENCH_PROFILE=1 (CPU profiles of both services, summarised at the end),
 * BENCH_WRITE_DOC=0 (leave docs/PERFORMANCE.md alone), BENCH_KEEP_DATABASE=1 (keep the run's database, to look into
 * afterwards), BENCH_LOG_LEVEL (the services' LOG_LEVEL, warn),
 * BENCH_SERVICE_NODE_ARGS (extra node flags for every service, e.g. --max-semi-space-size=8),
 * BENCH_ONLY (comma list of affiliates, events, webhooks, dashboard, payments, tracing, analytics; default all seven: the
 * events, webhooks, dashboard, payments, tracing and analytics scenarios run after the affiliates ones, see bench/events.ts,
 * bench/webhooks.ts, bench/dashboard.ts, bench/payments.ts, bench/tracing.ts and bench/analytics.ts for their own variables; a partial run leaves
 * docs/PERFORMANCE.md alone unless BENCH_WRITE_DOC=1), BENCH_SERVICE_ENV (NAME=value … for the affiliates, events, commissions and
 * dispatcher services, e.g. "DATABASE_POOL_SIZE=20 CONVERSION_CONCURRENCY=8").
 */

const TARGET_RATIO = 0.35;
const TARGET_P99_MS = 25;
const TARGET_RSS = 150 * 1024 * 1024;
const LIST_PATH = '/api/v1/affiliates?limit=25';
const CREATE_PATH = '/api/v1/affiliates';

const only = new Set<BenchPart>(
  (process.env['BENCH_ONLY'] || BENCH_PARTS.join(',')).split(',').map((p) => {
    const part = p.trim() as BenchPart;
    if (!BENCH_PARTS.includes(part))
      throw new Error(`BENCH_ONLY: unknown part ${JSON.stringify(p)} (parts: ${BENCH_PARTS.join(', ')})`);
    return part;
  }),
);
const partial = only.size < BENCH_PARTS.length;

const settings = {
  duration: intEnv('BENCH_DURATION', 10, 1),
  warmup: intEnv('BENCH_WARMUP', 2, 0),
  connections: intEnv('BENCH_CONNECTIONS', 32, 1),
  keys: intEnv('BENCH_KEYS', 32, 1),
  affiliates: intEnv('BENCH_AFFILIATES', 100_000, 26),
  profile: process.env['BENCH_PROFILE'] === '1',
  writeDoc: partial ? process.env['BENCH_WRITE_DOC'] === '1' : process.env['BENCH_WRITE_DOC'] !== '0',
  logLevel: process.env['BENCH_LOG_LEVEL'] || 'warn',
  serviceNodeArgs: argsEnv('BENCH_SERVICE_NODE_ARGS'),
  serviceEnv: settingsEnv('BENCH_SERVICE_ENV'),
};

const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
const runId = randomBytes(4).toString('hex');
const dbName = `bench_${runId}`;
const prefix = `bench${runId}`;

const run = holdRunResources(log);
run.prefixes.push(prefix);
const children = run.children;

/** The CPU table columns of the floor rows: its two processes (`bench/floor-hop.ts`) and what they use. */
const FLOOR_COLUMNS = ['floor front', 'floor responder', 'load generator', 'postgres*', 'nats-server*'] as const;

/**
 * What the floor says of the GET list target in this run: whether the design's hops alone, with one Postgres round
 * trip and none of the gateway's or the service's work, reach the target ratio on this machine, and how much of the
 * floor's rate the real path kept.
 */
function floorVerdict(listRps: number, floorRps: number, bareRps: number): string {
  const floorRatio = floorRps / bareRps;
  const reach =
    floorRatio < TARGET_RATIO
      ? `below the target of ${pct(TARGET_RATIO)}: on this machine in this run the hops alone cannot reach it`
      : `above the target of ${pct(TARGET_RATIO)}: the real path would have to keep ${pct(TARGET_RATIO / floorRatio)} of the floor's rate to reach it`;
  return `The floor with the query reached ${pct(floorRatio)} of bare express, ${reach}. The gateway path kept ${pct(listRps / floorRps)} of the floor's rate.`;
}

/** Starts the floor's responder, then its front; resolves once the front listens and the responder subscribes. */
async function startFloor(query: boolean, page: string, env: Record<string, string>) {
  const message = <T>(child: Child, what: (m: T) => boolean) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: T) => {
        if (!what(m)) return;
        child.proc.off('message', onMessage);
        resolve(m);
      };
      child.proc.on('message', onMessage);
      child.proc.once('exit', (code) =>
        reject(new Error(`${child.name} exited with ${code}:\n${child.output.join('\n')}`)),
      );
    });
  const responder = startChild(
    'floor responder',
    'bench/floor-hop.ts',
    { ...env, FLOOR_ROLE: 'responder', FLOOR_QUERY: query ? '1' : '0' },
    {
      flagsOf: 'affiliates',
      ipc: true,
    },
  );
  children.push(responder);
  await message<{ started?: boolean }>(responder, (m) => m.started === true);
  const ready = message<{ ready?: boolean }>(responder, (m) => m.ready === true);
  responder.proc.send({ page });
  await ready;
  const front = startChild(
    'floor front',
    'bench/floor-hop.ts',
    { ...env, FLOOR_ROLE: 'front' },
    { flagsOf: 'gateway', ipc: true },
  );
  children.push(front);
  const { port } = await message<{ port?: number }>(front, (m) => typeof m.port === 'number');
  return {
    front,
    responder,
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      await front.stop();
      await responder.stop();
    },
  };
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const loadBefore = os.loadavg()[0]!;
  const infra = (run.infra = await ensureInfra({ purpose: 'bench', log }));
  log(infra.describe.join('; '));

  // ---- database, bus, data --------------------------------------------------------------------------------------
  const databaseUrl = await ensureDatabase(infra.adminUrl, dbName);
  run.database = dbName;
  const sql = (run.sql = connectDatabase(databaseUrl, {
    max: 2,
    applicationName: 'bench',
    statementTimeoutMs: 0,
    lockTimeoutMs: 0,
  }));
  await migrate(sql);
  const nc = (run.nc = await connectNats(infra.natsUrl, 'bench'));
  const [{ server_version: postgresVersion } = { server_version: '?' }] = await sql<
    { server_version: string }[]
  >`show server_version`;

  let t0 = performance.now();
  const { merchantId, keys } = await seedMerchant(sql, { affiliates: settings.affiliates, keys: settings.keys });
  log(
    `seeded an enterprise merchant with ${settings.affiliates} affiliates and ${keys.length} keys in ${((performance.now() - t0) / 1000).toFixed(1)} s (database ${dbName})`,
  );

  // ---- processes --------------------------------------------------------------------------------------------------
  // One directory per service: every thread of it writes a profile.
  const profileDir = (name: string) => join(ROOT, '.data', 'bench-profiles', runId, name);
  const nodeArgs = (name: string) => {
    if (!settings.profile) return settings.serviceNodeArgs;
    mkdirSync(profileDir(name), { recursive: true });
    return [...settings.serviceNodeArgs, '--cpu-prof', `--cpu-prof-dir=${profileDir(name)}`];
  };
  const common = {
    APP_ENV: 'development',
    DATABASE_URL: databaseUrl,
    NATS_URL: infra.natsUrl,
    NATS_PREFIX: prefix,
    LOG_LEVEL: settings.logLevel,
  };
  const [gatewayPort, gatewayOps] = [await freePort(), await freePort()];

  buildServices();
  t0 = performance.now();
  // The services besides the gateway: the affiliates service for its part, the others started by the parts that need them.
  const services = new Map<ServiceName, Child>();
  const startService = async (name: ServiceName, env: Record<string, string> = {}): Promise<Child> => {
    const running = services.get(name);
    if (running) return running;
    const ops = await freePort();
    const extra = settings.serviceEnv;
    const child = startChild(
      name,
      serviceEntry(name),
      { ...common, ...extra, ...env, OPS_PORT: String(ops) },
      { flagsOf: name, nodeArgs: nodeArgs(name) },
    );
    children.push(child);
    services.set(name, child);
    await waitFor(child, 'readiness', async () => (await fetch(`http://127.0.0.1:${ops}/readyz`)).ok);
    return child;
  };
  const affiliates = only.has('affiliates') ? await startService('affiliates') : undefined;

  const gateway = startChild(
    'gateway',
    serviceEntry('gateway'),
    { ...common, HOST: '127.0.0.1', PORT: String(gatewayPort), OPS_PORT: String(gatewayOps) },
    { flagsOf: 'gateway', nodeArgs: nodeArgs('gateway') },
  );
  children.push(gateway);
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  let page = '';
  if (affiliates) {
    await waitFor(gateway, 'a first page of affiliates', async () => {
      const res = await fetch(gatewayUrl + LIST_PATH, { headers: { authorization: `Bearer ${keys[0]}` } });
      if (res.status !== 200) return false;
      page = await res.text();
      return true;
    });
    const rows = (JSON.parse(page) as { data: unknown[] }).data.length;
    if (rows !== 25) throw new Error(`the first page has ${rows} affiliates, not 25`);
  } else {
    await waitFor(gateway, 'readiness', async () => (await fetch(`http://127.0.0.1:${gatewayOps}/readyz`)).ok);
  }

  const bare = startChild('bare-express', 'bench/bare-express.ts', {}, { flagsOf: 'gateway', ipc: true });
  children.push(bare);
  const barePort = await new Promise<number>((resolve, reject) => {
    bare.proc.once('message', (m: { port: number }) => resolve(m.port));
    bare.proc.once('exit', (code) => reject(new Error(`bare-express exited with ${code}:\n${bare.output.join('\n')}`)));
    bare.proc.send({ page });
  });
  const bareUrl = `http://127.0.0.1:${barePort}`;
  log(
    `gateway${affiliates ? ', affiliates' : ''} and bare express up in ${((performance.now() - t0) / 1000).toFixed(1)} s${affiliates ? `; page of 25 affiliates = ${Buffer.byteLength(page)} bytes` : ''}`,
  );

  // ---- load -------------------------------------------------------------------------------------------------------
  const { connections, duration, warmup } = settings;
  // The gateway's and the baseline's memory is sampled over every part; the parts sample the services they start.
  const baseChildren = [gateway, ...(affiliates ? [affiliates] : []), bare];
  const idle = new Map(baseChildren.map((c) => [c.name, readMemory(c.proc.pid)?.rss ?? null]));
  const memory = sampleMemory(baseChildren);
  const verdicts: Verdict[] = [];
  let affiliatesSection: string[] = [];

  if (affiliates) {
    let email = 0;
    const createBody = () => JSON.stringify({ email: `load-${runId}-${email++}@bench.example.com` });
    const targets = {
      bareList: { base: bareUrl, method: 'GET', path: LIST_PATH, keys },
      list: { base: gatewayUrl, method: 'GET', path: LIST_PATH, keys },
      bareCreate: { base: bareUrl, method: 'POST', path: CREATE_PATH, keys, body: createBody },
      create: { base: gatewayUrl, method: 'POST', path: CREATE_PATH, keys, body: createBody },
    } satisfies Record<string, Target>;

    const cpu = cpuMeter([gateway, affiliates, bare]);
    type Measured = { figures: Figures; cpu: Record<CpuColumn, number | null> };
    const timed = async (run: () => Promise<Figures>): Promise<Measured> => {
      const before = cpu.snapshot();
      const figures = await run();
      return { figures, cpu: cpu.since(before) };
    };
    const measure = async (name: string, target: Target): Promise<Measured> => {
      if (warmup > 0) {
        log(`${name}: warm-up ${warmup} s`);
        await closedLoop(target, { connections, duration: warmup });
      }
      log(`${name}: ${duration} s, ${connections} connections`);
      const m = await timed(() => closedLoop(target, { connections, duration }));
      log(`${name}: ${m.figures.rps.toFixed(0)} req/s, p50 ${m.figures.p50} ms, p99 ${m.figures.p99} ms`);
      return m;
    };

    const bareList = await measure('bare express GET', targets.bareList);
    const list = await measure('gateway GET list', targets.list);
    const floors: Row[] = [];
    for (const query of [false, true]) {
      const name = query ? 'floor GET, one Postgres round trip' : 'floor GET, page from memory';
      const hop = await startFloor(query, page, {
        NATS_URL: infra.natsUrl,
        DATABASE_URL: databaseUrl,
        FLOOR_SUBJECT: `${prefix}.bench.floor`,
      });
      const floorCpu = cpuMeter([hop.front, hop.responder]);
      const target: Target = { ...targets.list, base: hop.url };
      if (warmup > 0) await closedLoop(target, { connections, duration: warmup });
      log(`${name}: ${duration} s, ${connections} connections`);
      const before = floorCpu.snapshot();
      const figures = await closedLoop(target, { connections, duration });
      floors.push({
        scenario: query
          ? 'floor: express → NATS → responder → Postgres `select 1`'
          : 'floor: express → NATS → responder (page from memory)',
        figures,
        cpu: floorCpu.since(before),
        baseline: bareList.figures.rps,
      });
      log(`${name}: ${figures.rps.toFixed(0)} req/s`);
      await hop.stop();
    }
    const queryFloor = floors[1]!;
    const rate = Math.max(1, Math.round(bareList.figures.rps * TARGET_RATIO));
    log(`gateway GET list at ${rate} req/s (35 % of bare), open loop: ${duration} s`);
    const listAtRate = await timed(() => openLoop(targets.list, { connections, duration, rate }));
    log(`gateway GET list at ${rate} req/s (35 % of bare), autocannon overallRate: ${duration} s`);
    const listAtRateBursts = await timed(() => closedLoop(targets.list, { connections, duration, overallRate: rate }));
    const bareCreate = await measure('bare express POST', targets.bareCreate);
    const create = await measure('gateway POST create', targets.create);

    const loadRows: Row[] = [
      { scenario: 'bare express GET (25-row page from memory)', ...bareList },
      { scenario: 'gateway GET /api/v1/affiliates?limit=25', ...list, baseline: bareList.figures.rps },
      {
        scenario: `gateway GET list at ${rate} req/s, open loop (35 % of bare)`,
        ...listAtRate,
        baseline: bareList.figures.rps,
      },
      {
        scenario: `gateway GET list at ${rate} req/s, autocannon overallRate`,
        ...listAtRateBursts,
        baseline: bareList.figures.rps,
      },
      { scenario: 'bare express POST (201 echo)', ...bareCreate },
      { scenario: 'gateway POST /api/v1/affiliates', ...create, baseline: bareCreate.figures.rps },
    ];
    const allAnswered =
      listAtRate.figures.requests === Math.round(rate * duration) &&
      listAtRate.figures.non2xx === 0 &&
      listAtRate.figures.errors === 0;
    verdicts.push(
      {
        target: `GET list ≥ ${pct(TARGET_RATIO)} of bare express req/s`,
        measured: `${pct(list.figures.rps / bareList.figures.rps)} (${list.figures.rps.toFixed(0)} / ${bareList.figures.rps.toFixed(0)} req/s; floor with the query ${pct(queryFloor.figures.rps / bareList.figures.rps)})`,
        pass: list.figures.rps >= TARGET_RATIO * bareList.figures.rps && list.figures.non2xx === 0,
      },
      {
        target: `GET list p99 ≤ ${TARGET_P99_MS} ms at ${pct(TARGET_RATIO)} of the bare rate (${rate} req/s)`,
        measured: `p99 ${listAtRate.figures.p99.toFixed(1)} ms, ${listAtRate.figures.rps.toFixed(0)} req/s achieved${allAnswered ? '' : ', not every request answered 2xx'}`,
        pass: listAtRate.figures.p99 <= TARGET_P99_MS && allAnswered,
      },
    );
    const nonOk = [list, listAtRate, listAtRateBursts, create].some(({ figures: f }) => f.non2xx > 0 || f.errors > 0);
    affiliatesSection = [
      '### Affiliates API',
      '',
      loadTable(loadRows),
      '',
      cpuTable(loadRows),
      '',
      "The floor of the design (`bench/floor-hop.ts`): the gateway's hops and nothing else, no auth, no rate limit, no",
      'validation, the page bytes from memory. The gateway cannot be faster than the row with the query.',
      '',
      loadTable(floors),
      '',
      cpuTable(floors, FLOOR_COLUMNS),
      '',
      floorVerdict(list.figures.rps, queryFloor.figures.rps, bareList.figures.rps),
      ...(nonOk
        ? ['', 'Some gateway responses were not 2xx (a 429 means the rate limiter capped the run: raise BENCH_KEYS).']
        : []),
      '',
    ];
  }

  // ---- conversion events (bench/events.ts), then webhooks (bench/webhooks.ts) -------------------------------------
  const context: BenchContext = {
    runId,
    log,
    settings: { duration, warmup, connections },
    databaseUrl,
    adminUrl: infra.adminUrl,
    natsUrl: infra.natsUrl,
    sql,
    nc,
    prefix,
    merchantId,
    keys,
    gatewayUrl,
    gateway,
    bare,
    bareUrl,
    service: startService,
    running: (name) => services.get(name),
    adopt: (child) => {
      children.push(child);
      return child;
    },
  };
  const parts: { title: string; result: PartResult }[] = [];
  if (only.has('events'))
    parts.push({
      title: 'Conversion events: POST /api/v1/events and event → commission',
      result: await runEvents(context),
    });
  if (only.has('webhooks')) parts.push({ title: 'Webhook delivery', result: await runWebhooks(context) });
  if (only.has('dashboard')) parts.push({ title: 'Merchant dashboard', result: await runDashboard(context) });
  if (only.has('payments')) parts.push({ title: 'Platform payment API', result: await runPayments(context) });
  if (only.has('tracing'))
    parts.push({ title: 'Tracing: CPU per POST /api/v1/events, off and on', result: await runTracing(context) });
  if (only.has('analytics'))
    parts.push({ title: 'Analytics: reads at size, and recording with rollups', result: await runAnalytics(context) });
  memory.stop();

  const memRows: MemoryRow[] = [
    ...baseChildren.map((c) => ({
      process: c.name,
      idle: idle.get(c.name) ?? null,
      sampled: memory.peak(c.name),
      hwm: readMemory(c.proc.pid)?.hwm ?? null,
      target: c !== bare,
    })),
    ...parts.flatMap((p) => p.result.memRows),
  ];
  verdicts.push(
    ...parts.flatMap((p) => p.result.verdicts),
    ...memRows
      .filter((r) => r.target)
      .map((r) => {
        const worst = Math.max(r.sampled ?? 0, r.hwm ?? 0);
        return {
          target: `${r.process} peak RSS ≤ ${mb(TARGET_RSS)}`,
          measured: mb(worst),
          pass: worst > 0 && worst <= TARGET_RSS,
        };
      }),
  );

  const cores = os.availableParallelism();
  const busy = loadBefore > cores * 0.25;
  const machine = [
    `- Date: ${startedAt.toISOString()}`,
    `- Machine: nproc ${cores}, ${os.cpus()[0]?.model?.trim() ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.platform()} ${os.release()}`,
    `- Load average before the run: ${loadBefore.toFixed(2)}${busy ? ' — the machine was busy: these figures are not representative' : ''}`,
    `- Node ${process.version}, Postgres ${postgresVersion}, NATS ${nc.info?.version ?? '?'} (${infra.describe.join('; ')})`,
    `- Settings: ${duration} s per scenario after ${warmup} s of warm-up, ${connections} connections, ${keys.length} keys at 60,000/min rotated per request, ${settings.affiliates} affiliates${settings.serviceNodeArgs.length ? `, service node flags ${settings.serviceNodeArgs.join(' ')}` : ''}${
      Object.keys(settings.serviceEnv).length
        ? `, service environment ${Object.entries(settings.serviceEnv)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ')}`
        : ''
    }${settings.profile ? ', CPU profiling on (slower)' : ''}${partial ? `; parts: ${[...only].join(', ')}` : ''}`,
  ].join('\n');
  const section = [
    machine,
    '',
    ...affiliatesSection,
    ...parts.flatMap((p) => [`### ${p.title}`, '', p.result.section, '']),
    '(*) postgres and nats-server: every process of that name on this machine, so only meaningful when nothing else uses them.',
    '',
    '### Memory and verdicts',
    '',
    memoryTable(memRows, TARGET_RSS),
    '',
    verdictTable(verdicts),
  ].join('\n');

  process.stdout.write(`\n${section}\n\n`);
  if (settings.writeDoc) {
    const doc = join(ROOT, 'docs', 'PERFORMANCE.md');
    writeFigures(doc, section);
    log(`figures written to ${doc}`);
  }

  await run.release();
  if (settings.profile) {
    for (const name of ['gateway', ...services.keys()]) {
      // The main thread's profile is the largest: the loader thread only works at start-up.
      const dir = profileDir(name);
      const files = existsSync(dir) ? readdirSync(dir).map((f) => join(dir, f)) : [];
      const main = files.sort((a, b) => statSync(b).size - statSync(a).size)[0];
      if (main)
        process.stdout.write(`\nCPU profile of ${name}, main thread (start-up included):\n${summariseProfile(main)}\n`);
      else log(`no profile written for ${name}`);
    }
  }
}

main().then(
  () => process.exit(0),
  async (err) => {
    log(`failed: ${(err as Error).stack ?? err}`);
    await run.release().catch(() => {});
    process.exit(1);
  },
);
