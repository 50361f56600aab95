import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Sql } from '@platform/shared/db';
import { serviceNodeArgs } from '../scripts/runtime.ts';

export const ROOT = new URL('../', import.meta.url).pathname;

/** A child process of the benchmark, with the tail of its output kept for error reports. */
export interface Child {
  name: string;
  proc: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
  /** SIGTERM (the service drains and exits), SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const MAX_ECHOED_LINES = 20;

/** A service's production entry point: the bundle `npm run build` makes (plain node, no TypeScript loader). */
export const serviceEntry = (service: string, dist = 'dist') => `${dist}/${service}/main.js`;

/** Builds the services once per run, so the benchmark measures what a container runs. */
export function buildServices(): void {
  const result = spawnSync(process.execPath, [`${ROOT}scripts/build.ts`], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (result.status !== 0) throw new Error('npm run build failed');
}

/**
 * Starts `node <flags of flagsOf> [nodeArgs] <entry>` from the repository root (Node runs TypeScript entries itself):
 * a service runs with its own flags (scripts/runtime.ts), a baseline with those of the service it is
 * compared with. Output is kept (the last 200 lines) and the first lines are echoed on stderr: at LOG_LEVEL=warn a
 * service only prints what deserves attention.
 */
export function startChild(
  name: string,
  entry: string,
  env: Record<string, string>,
  opts: { flagsOf: string; nodeArgs?: string[]; ipc?: boolean },
): Child {
  const proc = spawn(process.execPath, [...serviceNodeArgs(opts.flagsOf), ...(opts.nodeArgs ?? []), entry], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: opts.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  let echoed = 0;
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) {
      if (!line) continue;
      output.push(line);
      if (output.length > 200) output.shift();
      if (echoed < MAX_ECHOED_LINES) {
        echoed++;
        process.stderr.write(`[${name}] ${line}${echoed === MAX_ECHOED_LINES ? ' (further lines not shown)' : ''}\n`);
      }
    }
  };
  proc.stdout!.on('data', onData);
  proc.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return {
    name,
    proc,
    output,
    exited,
    async stop(graceMs = 15_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resolves when `check` returns true; rejects when the child exits first or after `timeoutMs`. */
export async function waitFor(
  child: Child,
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
      throw new Error(
        `${child.name} exited (${child.proc.exitCode ?? child.proc.signalCode}) before ${what}:\n${child.output.join('\n')}`,
      );
    }
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new Error(`${child.name}: timed out waiting for ${what}:\n${child.output.join('\n')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Resident set size now and its high-water mark, in bytes, from /proc (Linux); null elsewhere. */
export function readMemory(pid: number | undefined): { rss: number; hwm: number } | null {
  if (pid === undefined) return null;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    const rss = kb('VmRSS');
    const hwm = kb('VmHWM');
    return Number.isNaN(rss) || Number.isNaN(hwm) ? null : { rss, hwm };
  } catch {
    return null;
  }
}

/**
 * Polls the children's RSS while the load runs. `peak()` is the highest resident size sampled per child; the
 * kernel's VmHWM (read at the end) also counts start-up and any spike between samples.
 */
export function sampleMemory(children: Child[], intervalMs = 250) {
  const peaks = new Map<string, number>();
  const sample = () => {
    for (const c of children) {
      const m = readMemory(c.proc.pid);
      if (m) peaks.set(c.name, Math.max(peaks.get(c.name) ?? 0, m.rss));
    }
  };
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  sample();
  return {
    peak: (name: string) => peaks.get(name) ?? null,
    stop: () => {
      sample();
      clearInterval(timer);
    },
  };
}

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim();
    clockTicks = Number(out) > 0 ? Number(out) : 100;
  }
  return clockTicks;
}

/** User + system CPU seconds a process has used (all its threads), from /proc/<pid>/stat; null when unreadable. */
export function processCpu(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
  } catch {
    return null;
  }
}

/** Every process on the machine whose command name is `comm` (e.g. all Postgres backends), with its CPU seconds. */
function processesNamed(comm: string): Map<number, number> {
  const found = new Map<number, number>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return found;
  }
  for (const p of pids) {
    try {
      if (readFileSync(`/proc/${p}/comm`, 'utf8').trim() !== comm) continue;
    } catch {
      continue;
    }
    const cpu = processCpu(Number(p));
    if (cpu !== null) found.set(Number(p), cpu);
  }
  return found;
}

/** The columns of the affiliates scenarios' CPU table; the other parts name their own (cpuTable's `columns`). */
export const CPU_COLUMNS = [
  'gateway',
  'affiliates',
  'bare-express',
  'load generator',
  'postgres*',
  'nats-server*',
] as const;
/** A child's name, `load generator` (this process), or `postgres*` / `nats-server*` (every process of that name). */
export type CpuColumn = string;

/**
 * CPU seconds used between two moments by each of the children (keyed by name), by this process (the load
 * generator), and by every `postgres` and `nats-server` process on the machine (so only meaningful when those run
 * here and nothing else uses them). Linux only: elsewhere every figure is null.
 */
export function cpuMeter(children: Child[]) {
  const take = () => {
    const own = process.cpuUsage();
    return {
      children: new Map(children.map((c) => [c.name, c.proc.pid === undefined ? null : processCpu(c.proc.pid)])),
      self: (own.user + own.system) / 1e6,
      postgres: processesNamed('postgres'),
      nats: processesNamed('nats-server'),
    };
  };
  type Snapshot = ReturnType<typeof take>;
  const grown = (before: Map<number, number>, after: Map<number, number>) => {
    if (after.size === 0) return null;
    let total = 0;
    for (const [pid, cpu] of after) total += cpu - (before.get(pid) ?? 0); // a backend started meanwhile counts from 0
    return total;
  };
  return {
    snapshot: take,
    since(before: Snapshot): Record<CpuColumn, number | null> {
      const after = take();
      const used: Record<CpuColumn, number | null> = {};
      for (const c of children) {
        const a = after.children.get(c.name);
        const b = before.children.get(c.name);
        used[c.name] = a == null || b == null ? null : a - b;
      }
      used['load generator'] = after.self - before.self;
      used['postgres*'] = grown(before.postgres, after.postgres);
      used['nats-server*'] = grown(before.nats, after.nats);
      return used;
    },
  };
}

/**
 * CPU seconds used so far by each Postgres backend connected to the bench database (the postgres* column counts
 * every postgres process on the machine, other users of the server included). A backend that ends during a run
 * loses its share; the services' pools keep theirs open.
 */
export async function benchDatabaseBackends(sql: Sql): Promise<Map<number, number>> {
  const rows = await sql<
    { pid: number }[]
  >`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    const cpu = processCpu(pid);
    if (cpu !== null) out.set(pid, cpu); // null: gone meanwhile
  }
  return out;
}

/** What the backends of `after` used since `before`; a backend started meanwhile counts from 0. */
export function backendsUsed(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, cpu] of after) total += cpu - (before.get(pid) ?? 0);
  return total;
}
