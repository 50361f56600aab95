import type { NatsConnection } from '@nats-io/transport-node';
import type { Sql } from '@platform/shared/db';
import { closedLoop, type Figures, type Target } from './load.ts';
import { cpuMeter, readMemory, type Child, type CpuColumn } from './procs.ts';
import type { MemoryRow, Verdict } from './report.ts';

/**
 * What bench/run.ts hands to each part of `npm run bench` after the shared set-up (database, bus, the seeded
 * merchant, the gateway and the bare express baseline), so that bench/events.ts and bench/webhooks.ts can start
 * the services they need on the run's database and NATS prefix and report into the same tables.
 */

export const BENCH_PARTS = [
  'affiliates',
  'events',
  'webhooks',
  'dashboard',
  'payments',
  'tracing',
  'analytics',
] as const;
export type BenchPart = (typeof BENCH_PARTS)[number];

/** The services a part may start (the gateway and the affiliates service are started by run.ts). */
export type ServiceName = 'affiliates' | 'events' | 'commissions' | 'dispatcher' | 'payments';

export interface BenchContext {
  runId: string;
  log: (line: string) => void;
  settings: { duration: number; warmup: number; connections: number };
  databaseUrl: string;
  /** The server's maintenance database (for a part that needs a database of its own) and the run's NATS server. */
  adminUrl: string;
  natsUrl: string;
  /** The bench's own connection (2 connections): set-up and bookkeeping, not load. */
  sql: Sql;
  nc: NatsConnection;
  prefix: string;
  /** The seeded enterprise merchant (BENCH_AFFILIATES affiliates) and its keys at 60,000/min. */
  merchantId: string;
  keys: string[];
  gatewayUrl: string;
  gateway: Child;
  bare: Child;
  bareUrl: string;
  /**
   * Starts the built service (dist/<name>/main.js) as a child process with the run's DATABASE_URL, NATS_URL,
   * NATS_PREFIX, APP_ENV and LOG_LEVEL (plus BENCH_SERVICE_ENV and `env`), waits for its /readyz and stops it at
   * the end of the run. A service already running is returned as it is.
   */
  service(name: ServiceName, env?: Record<string, string>): Promise<Child>;
  /** The service process of that name if it runs. */
  running(name: ServiceName): Child | undefined;
  /** Registers a helper process (not a service) to be stopped at the end of the run. */
  adopt(child: Child): Child;
}

/** What a part adds to the report: its own section (tables), its memory rows and its PASS/MISS lines. */
export interface PartResult {
  section: string;
  memRows: MemoryRow[];
  verdicts: Verdict[];
}

export const intEnv = (name: string, fallback: number, min: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number ≥ ${min} (got ${raw})`);
  return value;
};

/** Node flags from a variable: `--a --b=1` → ['--a', '--b=1']. */
export const argsEnv = (name: string): string[] => (process.env[name] ?? '').split(/\s+/).filter(Boolean);

/** Settings from a variable of `NAME=value …` pairs, for the services' environment. */
export function settingsEnv(name: string): Record<string, string> {
  return Object.fromEntries(
    (process.env[name] ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .map((pair) => {
        const eq = pair.indexOf('=');
        if (eq < 1) throw new Error(`${name}: expected NAME=value, got ${JSON.stringify(pair)}`);
        return [pair.slice(0, eq), pair.slice(eq + 1)];
      }),
  );
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` every `everyMs` until it returns true; false when `timeoutMs` passed first. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (performance.now() > deadline) return false;
    await sleep(everyMs);
  }
}

/** The p-th percentile of ascending `sorted` (nearest rank, as bench/load.ts openLoop); NaN when empty. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const ascending = (values: number[]): Float64Array => Float64Array.from(values).sort();

export type Measured = { figures: Figures; cpu: Record<CpuColumn, number | null> };

/** CPU per measured run, and the closed-loop measurement with its warm-up (as the affiliates scenarios do). */
export function measurer(ctx: BenchContext, children: Child[]) {
  const cpu = cpuMeter(children);
  const { connections, duration, warmup } = ctx.settings;
  const timed = async (run: () => Promise<Figures>): Promise<Measured> => {
    const before = cpu.snapshot();
    const figures = await run();
    return { figures, cpu: cpu.since(before) };
  };
  return {
    cpu,
    timed,
    async closed(name: string, target: Target): Promise<Measured> {
      if (warmup > 0) {
        ctx.log(`${name}: warm-up ${warmup} s`);
        await closedLoop(target, { connections, duration: warmup });
      }
      ctx.log(`${name}: ${duration} s, ${connections} connections`);
      const m = await timed(() => closedLoop(target, { connections, duration }));
      ctx.log(`${name}: ${m.figures.rps.toFixed(0)} req/s, p50 ${m.figures.p50} ms, p99 ${m.figures.p99} ms`);
      return m;
    },
  };
}

/** RSS of each child now: the "before load" column of the memory table. */
export function idleMemory(children: Child[]): Map<string, number | null> {
  return new Map(children.map((c) => [c.name, readMemory(c.proc.pid)?.rss ?? null]));
}

/** Memory rows for children sampled with `sampleMemory`; `target` says whether the 150 MB target applies. */
export function memoryRows(
  children: { child: Child; target: boolean }[],
  idle: Map<string, number | null>,
  peak: (name: string) => number | null,
): MemoryRow[] {
  return children.map(({ child, target }) => ({
    process: child.name,
    idle: idle.get(child.name) ?? null,
    sampled: peak(child.name),
    hwm: readMemory(child.proc.pid)?.hwm ?? null,
    target,
  }));
}
