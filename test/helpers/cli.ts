import { spawn } from 'node:child_process';
import { ROOT } from './platform.ts';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON, when it is JSON. */
  json: any;
}

/** The operator CLI as operators run it: its own process against the given database. */
export function runAdmin(databaseUrl: string, ...args: string[]): Promise<CliRun> {
  return runAdminWithEnv({ DATABASE_URL: databaseUrl }, ...args);
}

/** The same, with more of the operator's environment (the dispatcher's URL policy, say). */
export function runAdminWithEnv(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  return runScript('scripts/admin.ts', args, env);
}

/** Runs a TypeScript entry point of the repository as its own process, to completion (killed after 60 s). */
export function runScript(entry: string, args: string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `${ROOT}${entry}`, ...args], {
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
      let json: unknown;
      try {
        json = stdout ? JSON.parse(stdout) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}
