import { spawn, type ChildProcess } from 'node:child_process';
import { connectDatabase } from '@platform/shared/db';
import { migrate } from '@platform/shared/migrate';
import { ensureDashboardBuilt } from '../services/dashboard/build.ts';
import { databaseProblem, ensureDatabase, ensureInfra, portInUse } from './infra.ts';
import { serviceNodeArgs } from './runtime.ts';
import { PLATFORM_SERVICES } from './services.ts';

/**
 * `npm start`: the whole platform on one machine for development. Postgres and NATS are found or started
 * (scripts/infra.ts), migrations run, then every service runs as its own process, as in Kubernetes. Their JSON log
 * lines are prefixed with the service name. Ctrl-C (or SIGTERM) drains every service and stops what was started.
 */
const ROOT = new URL('..', import.meta.url).pathname;
const say = (line: string) => process.stderr.write(`start: ${line}\n`);

say(`node ${process.version}`);
// The gateway serves the dashboard's build; `npm ci` made it, this remakes it after a change to its sources.
await ensureDashboardBuilt(say);

/** Stops with one line that says what to do, instead of a service's stack trace. */
function refuse(line: string): never {
  say(line);
  process.exit(1);
}
/** A service's ops port is <NAME>_OPS_PORT or its default; the gateway's public port is PORT or its default. */
const opsPortVariable = (name: string) => `${name.toUpperCase()}_OPS_PORT`;
const ports = PLATFORM_SERVICES.flatMap((s) => [
  ...(s.httpPort === null ? [] : [{ variable: 'PORT', port: Number(process.env['PORT'] ?? s.httpPort) }]),
  { variable: opsPortVariable(s.name), port: Number(process.env[opsPortVariable(s.name)] ?? s.opsPort) },
]);
for (const { variable, port } of ports) {
  if (await portInUse(port))
    refuse(`port ${port} (${variable}) is in use: stop what listens there, or run with ${variable}=<another port>`);
}

const infra = await ensureInfra({ purpose: 'start', log: say });
say(infra.describe.join('; '));
const databaseUrl = process.env['DATABASE_URL'] ?? (await ensureDatabase(infra.adminUrl, 'affiliate'));
const problem = await databaseProblem(databaseUrl);
if (problem) {
  await infra.stop();
  refuse(problem);
}
{
  const sql = connectDatabase(databaseUrl, { max: 1, applicationName: 'start' });
  try {
    const applied = await migrate(sql);
    say(applied.length ? `migrations applied: ${applied.join(', ')}` : 'database is up to date');
  } finally {
    await sql.end({ timeout: 5 });
  }
}

const env = {
  ...process.env,
  APP_ENV: process.env['APP_ENV'] ?? 'development',
  DATABASE_URL: databaseUrl,
  NATS_URL: infra.natsUrl,
};
const children = new Map<string, ChildProcess>();
let stopping = false;

for (const service of PLATFORM_SERVICES) {
  const child = spawn(process.execPath, [...serviceNodeArgs(service.name), `${ROOT}${service.entry}`], {
    env: { ...env, OPS_PORT: process.env[opsPortVariable(service.name)] ?? String(service.opsPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.set(service.name, child);
  const prefix = `${service.name.padEnd(11)} | `;
  const pipeLines = (stream: NodeJS.ReadableStream, out: NodeJS.WriteStream) => {
    let rest = '';
    stream.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) out.write(prefix + line + '\n');
    });
  };
  pipeLines(child.stdout, process.stdout);
  pipeLines(child.stderr, process.stderr);
  child.once('exit', (code, signal) => {
    children.delete(service.name);
    if (!stopping) {
      say(`${service.name} exited (${signal ?? code}); stopping the platform`);
      void stop(1);
    } else if (children.size === 0) {
      void finish();
    }
  });
}
for (const { name, httpPort } of PLATFORM_SERVICES)
  if (httpPort !== null) say(`${name}: http://localhost:${process.env['PORT'] ?? httpPort} (Ctrl-C stops everything)`);

let exitCode = 0;
async function stop(code: number) {
  if (stopping) return;
  stopping = true;
  exitCode = code;
  say('stopping services');
  for (const child of children.values()) child.kill('SIGTERM');
  if (children.size === 0) await finish();
  setTimeout(() => {
    for (const child of children.values()) child.kill('SIGKILL');
  }, 20_000).unref();
}

let finished = false;
async function finish() {
  if (finished) return;
  finished = true;
  await infra.stop();
  say('stopped');
  process.exit(exitCode);
}

process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
