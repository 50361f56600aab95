import { spawn } from 'node:child_process';
import { runAdmin as runAdminCli } from '../../scripts/admin.ts';
import { ROOT } from './platform.ts';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON, when it is JSON. */
  json: any;
}

/** The operator CLI against the given database, run in this process (spawnAdmin runs its binary). */
export function runAdmin(databaseUrl: string, ...args: string[]): Promise<CliRun> {
  return runAdminWithEnv({ DATABASE_URL: databaseUrl }, ...args);
}

// The CLI reads its configuration from process.env and reports on process.stderr and process.exitCode, as a
// process of its own would: one run at a time, each with the environment it was given and its own stderr.
let queue: Promise<unknown> = Promise.resolve();

/**
 * The same, with more of the operator's environment (the dispatcher's URL policy, say): the CLI's own code (the
 * commands, its argument parsing, its output and exit code) in this process, which saves starting Node for each
 * command. spawnAdmin is the binary itself.
 */
export function runAdminWithEnv(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  const run = queue.then(() => runInProcess(env, args));
  queue = run.catch(() => {});
  return run;
}

async function runInProcess(env: Record<string, string>, args: string[]): Promise<CliRun> {
  const savedEnv = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  const savedExitCode = process.exitCode;
  // Put back as it was: usually no property of its own (the stream's prototype writes).
  const ownWrite = Object.getOwnPropertyDescriptor(process.stderr, 'write');
  let stdout = '';
  let stderr = '';
  Object.assign(process.env, env);
  process.exitCode = undefined;
  process.stderr.write = (chunk: string | Uint8Array) => {
    stderr += Buffer.from(chunk).toString();
    return true;
  };
  let code: number;
  try {
    code = await runAdminCli(args, { out: (text) => (stdout += text), err: (text) => (stderr += text) });
    if (code === 0) code = Number(process.exitCode ?? 0);
  } finally {
    if (ownWrite) Object.defineProperty(process.stderr, 'write', ownWrite);
    else delete (process.stderr as { write?: unknown }).write;
    process.exitCode = savedExitCode;
    for (const [name, value] of Object.entries(savedEnv)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
  return { code, stdout, stderr, json: parseJson(stdout) };
}

/** The operator CLI as operators run it: its own process (`npm run admin` runs the same file). */
export function spawnAdmin(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  return runScript('scripts/admin.ts', args, env);
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** Runs a TypeScript entry point of the repository as its own process, to completion (killed after 60 s). */
export function runScript(entry: string, args: string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`${ROOT}${entry}`, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, json: parseJson(stdout) });
    });
  });
}
