import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { connectDatabase } from '@platform/shared/db';
import { migrate } from '@platform/shared/migrate';
import { connectNats } from '@platform/shared/nats';
import { ensureDatabase, ensureInfra, freePort } from '../scripts/infra.ts';
import { argsEnv, intEnv, settingsEnv } from './context.ts';
import { openLoop } from './load.ts';
import { buildServices, cpuMeter, readMemory, serviceEntry, startChild, waitFor, type Child } from './procs.ts';
import { mb } from './report.ts';
import { holdRunResources } from './resources.ts';
import { seedMerchant } from './seed.ts';

/**
 * `npm run bench:ab`: two gateway + affiliates stacks that differ only in their build, node flags or settings, side
 * by side on one database, one NATS server and one machine. The same open-loop GET load goes to one stack, then the
 * other, in short rounds (A B, then B A, …), so that the machine's drift and the neighbours' noise fall on both
 * alike. Prints each process's CPU per request for every round, their means with the spread of the rounds, B against
 * A, and each process's peak RSS. For differences too small for `npm run bench` to tell from the machine's noise:
 * its runs follow one another, and this machine's speed changes between them by more than most changes do.
 *
 * Environment: BENCH_AB_A_NODE_ARGS and BENCH_AB_B_NODE_ARGS (node flags of each stack's services, after the usual
 * ones of scripts/runtime.ts), BENCH_AB_A_ENV and BENCH_AB_B_ENV (NAME=value … for each stack's services),
 * BENCH_AB_A_DIST and BENCH_AB_B_DIST (another build's dist directory, to compare code: a checkout of another commit
 * with its own node_modules, `npm run build` done there, and the same migrations; default this checkout's),
 * BENCH_AB_RATE (requests/s, 500: below what one stack sustains, so both measure the same work at the same rate),
 * BENCH_AB_ROUNDS (rounds per stack, 6), BENCH_AB_ROUND (s, 4), BENCH_AB_WARMUP (s per stack, 8), BENCH_AB_PATH
 * (/api/v1/affiliates?limit=25; any GET the gateway and the affiliates service answer alone, such as one affiliate
 * or another page size), BENCH_CONNECTIONS (32), BENCH_KEYS (32), BENCH_AFFILIATES (20000).
 */

const settings = {
  rate: intEnv('BENCH_AB_RATE', 500, 1),
  rounds: intEnv('BENCH_AB_ROUNDS', 6, 1),
  round: intEnv('BENCH_AB_ROUND', 4, 1),
  warmup: intEnv('BENCH_AB_WARMUP', 8, 0),
  path: process.env['BENCH_AB_PATH'] || '/api/v1/affiliates?limit=25',
  connections: intEnv('BENCH_CONNECTIONS', 32, 1),
  keys: intEnv('BENCH_KEYS', 32, 1),
  affiliates: intEnv('BENCH_AFFILIATES', 20_000, 26),
};
const variants = (['a', 'b'] as const).map((tag) => {
  const name = `BENCH_AB_${tag.toUpperCase()}`;
  const dist = process.env[`${name}_DIST`];
  return { tag, nodeArgs: argsEnv(`${name}_NODE_ARGS`), env: settingsEnv(`${name}_ENV`), dist: dist ? resolve(dist) : undefined };
});
const PROCESSES = ['gateway', 'affiliates', 'postgres*'] as const;

const log = (line: string) => process.stderr.write(`bench:ab: ${line}\n`);
const runId = randomBytes(4).toString('hex');
const dbName = `bench_ab_${runId}`;
const prefixOf = (tag: string) => `benchab${runId}${tag}`;

const run = holdRunResources(log);
for (const v of variants) run.prefixes.push(prefixOf(v.tag));

const describe = (v: (typeof variants)[number]) =>
  [...(v.dist ? [`build ${v.dist}`] : []), ...v.nodeArgs, ...Object.entries(v.env).map(([k, val]) => `${k}=${val}`)].join(' ') || '(defaults)';

async function main(): Promise<void> {
  const infra = (run.infra = await ensureInfra({ purpose: 'bench', log }));
  const databaseUrl = await ensureDatabase(infra.adminUrl, dbName);
  run.database = dbName;
  const sql = (run.sql = connectDatabase(databaseUrl, { max: 2, applicationName: 'bench:ab' }));
  await migrate(sql);
  // Connected for the clean-up: the services create their streams, the run deletes them.
  run.nc = await connectNats(infra.natsUrl, 'bench:ab');
  const { keys } = await seedMerchant(sql, { affiliates: settings.affiliates, keys: settings.keys });
  if (variants.some((v) => !v.dist)) buildServices();

  const stacks = [];
  for (const v of variants) {
    const common = { ...v.env, APP_ENV: 'development', DATABASE_URL: databaseUrl, NATS_URL: infra.natsUrl, NATS_PREFIX: prefixOf(v.tag), LOG_LEVEL: 'warn' };
    const affiliatesOps = await freePort();
    const affiliates = startChild(`affiliates ${v.tag}`, serviceEntry('affiliates', v.dist), { ...common, OPS_PORT: String(affiliatesOps) }, { nodeArgs: v.nodeArgs });
    run.children.push(affiliates);
    await waitFor(affiliates, 'readiness', async () => (await fetch(`http://127.0.0.1:${affiliatesOps}/readyz`)).ok);
    const [port, ops] = [await freePort(), await freePort()];
    const gateway = startChild(`gateway ${v.tag}`, serviceEntry('gateway', v.dist), { ...common, HOST: '127.0.0.1', PORT: String(port), OPS_PORT: String(ops) }, {
      nodeArgs: v.nodeArgs,
    });
    run.children.push(gateway);
    const base = `http://127.0.0.1:${port}`;
    await waitFor(gateway, 'a first answer', async () => (await fetch(base + settings.path, { headers: { authorization: `Bearer ${keys[0]}` } })).status === 200);
    // CPU µs per request of each process, and the p99, per round.
    const cpu = Object.fromEntries(PROCESSES.map((p) => [p, [] as number[]])) as Record<(typeof PROCESSES)[number], number[]>;
    stacks.push({ ...v, base, processes: { gateway, affiliates }, cpu, p99s: [] as number[] });
  }
  log(`A: ${describe(variants[0]!)}; B: ${describe(variants[1]!)}; GET ${settings.path} at ${settings.rate}/s, ${settings.rounds} rounds of ${settings.round} s each`);

  const meter = cpuMeter(run.children);
  const load = (base: string, duration: number) =>
    openLoop({ base, method: 'GET', path: settings.path, keys }, { connections: settings.connections, duration, rate: settings.rate, wantBody: () => false });
  for (const s of stacks) if (settings.warmup > 0) await load(s.base, settings.warmup);

  for (let round = 0; round < settings.rounds; round++) {
    for (const s of round % 2 === 0 ? stacks : [...stacks].reverse()) {
      const before = meter.snapshot();
      const figures = await load(s.base, settings.round);
      const used = meter.since(before);
      const seconds = { gateway: used[s.processes.gateway.name], affiliates: used[s.processes.affiliates.name], 'postgres*': used['postgres*'] };
      const line: string[] = [];
      for (const p of PROCESSES) {
        const us = ((seconds[p] ?? NaN) / figures.requests) * 1e6;
        s.cpu[p].push(us);
        line.push(`${p} ${us.toFixed(0)}`);
      }
      s.p99s.push(figures.p99);
      const failed = figures.non2xx + figures.errors;
      log(`round ${round + 1} ${s.tag.toUpperCase()}: ${figures.rps.toFixed(0)} req/s, p99 ${figures.p99.toFixed(1)} ms${failed ? `, ${failed} failed` : ''}; CPU µs per request: ${line.join(', ')}`);
    }
  }

  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const out: string[] = ['', `A: ${describe(variants[0]!)}`, `B: ${describe(variants[1]!)}`, ''];
  out.push('| CPU µs per request | A mean | A rounds | B mean | B rounds | B vs A |', '|:--|--:|--:|--:|--:|--:|');
  for (const p of PROCESSES) {
    const [a, b] = stacks.map((s) => s.cpu[p]);
    const range = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
    const diff = ((mean(b!) - mean(a!)) / mean(a!)) * 100;
    out.push(`| ${p} | ${mean(a!).toFixed(0)} | ${range(a!)} | ${mean(b!).toFixed(0)} | ${range(b!)} | ${diff >= 0 ? '+' : ''}${diff.toFixed(1)} % |`);
  }
  out.push('', '| stack | p99 ms, per round | gateway peak RSS | affiliates peak RSS |', '|:--|:--|--:|--:|');
  for (const s of stacks) {
    const hwm = (c: Child) => mb(readMemory(c.proc.pid)?.hwm ?? null);
    out.push(`| ${s.tag.toUpperCase()} | ${s.p99s.map((v) => v.toFixed(1)).join(', ')} | ${hwm(s.processes.gateway)} | ${hwm(s.processes.affiliates)} |`);
  }
  out.push('', '(*) every postgres process on this machine: the other stack is idle while one is measured.');
  console.log(out.join('\n'));
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
