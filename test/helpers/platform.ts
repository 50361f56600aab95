import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import postgres from 'postgres';
import { connectDatabase, type Sql } from '@platform/shared/db';
import { createLogger, type Logger } from '@platform/shared/log';
import { connectNats, ensureStreams } from '@platform/shared/nats';
import type { ServiceRuntime } from '@platform/shared/service';
import { loadAffiliatesConfig } from '@platform/affiliates/config';
import { startAffiliatesService } from '@platform/affiliates/service';
import { loadGatewayConfig } from '@platform/gateway/config';
import { startGateway, type RunningGateway } from '@platform/gateway/service';
import { createKey, createMerchant, type Plan } from '../../scripts/admin/commands.ts';
import { ApiClient } from './client.ts';
import { ensureTemplateDatabase } from './template-database.ts';

/** The slice of tap's Test that the helpers use, so they work with any test object. */
export interface TestLike {
  teardown(fn: () => unknown): void;
}

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ADMIN_URL =
  process.env['TEST_DATABASE_URL'] ?? process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
/** Where the test databases' server listens (npm test's own cluster, or the one it found), for a proxy in front. */
export const DATABASE_SERVER = { host: new URL(ADMIN_URL).hostname, port: Number(new URL(ADMIN_URL).port || 5432) };

/**
 * The scrypt cost (log2 N) of the suite's dashboard passwords, for the gateway (PASSWORD_HASH_COST) and the users the
 * helpers create: the files sign in hundreds of times and check the flow; the files about password work itself ask
 * for today's cost (`env: { PASSWORD_HASH_COST: String(PASSWORD_COST) }`).
 */
export const TEST_PASSWORD_COST = 10;

const randomName = () => randomBytes(5).toString('hex');

/**
 * A teardown step that cannot fail the ones after it: tap stops at the first teardown that rejects, and what it
 * would have stopped next (a nats-server child, a proxy's listener) then keeps the test process alive until its
 * timeout. The failure is reported, not thrown.
 */
export const bestEffort = (what: string, step: () => Promise<unknown>) => async () => {
  try {
    await step();
  } catch (err) {
    process.stderr.write(`teardown: ${what} failed: ${(err as Error).message}\n`);
  }
};

/** A fresh database of its own (migrated unless `migrated: false`), dropped at teardown. */
export async function createTestDatabase(
  t: TestLike,
  opts: { migrated?: boolean } = {},
): Promise<{ url: string; sql: Sql }> {
  const name = `t_${randomName()}`;
  // Connected only while it works (the drop at teardown reconnects): a file holds no idle server connection.
  const admin = postgres(ADMIN_URL, { max: 1, idle_timeout: 1, onnotice: () => {} });
  await createDatabase(admin, name, opts.migrated !== false);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  // The test's own pool loads data in bulk and holds locks on purpose: no statement or lock timeout.
  const sql = connectDatabase(url.toString(), {
    max: 5,
    applicationName: 'test',
    statementTimeoutMs: 0,
    lockTimeoutMs: 0,
  });
  t.teardown(
    bestEffort(`dropping database ${name}`, async () => {
      await sql.end({ timeout: 1 }).catch(() => {});
      // A server briefly full (too many connections) refuses the drop: try again a few times.
      for (let attempt = 1; ; attempt++) {
        try {
          await admin.unsafe(`drop database if exists "${name}" with (force)`);
          break;
        } catch (err) {
          if (attempt >= 5) throw err;
          await sleep(500);
        }
      }
      await admin.end({ timeout: 1 });
    }),
  );
  return { url: url.toString(), sql };
}

// The template database of this run: npm test builds it before tap starts; a file run alone builds it on first use.
let template: Promise<string> | undefined;
const templateOfRun = () => (template ??= templateFromEnv() ?? ensureTemplateDatabase(ADMIN_URL));
const templateFromEnv = () => {
  const name = process.env['TEST_TEMPLATE_DATABASE'];
  return name ? Promise.resolve(name) : undefined;
};

/**
 * Database `name`, migrated (a copy of the template, rebuilt when gone: another run's migrations replaced it) or
 * empty. A server briefly full (too many connections) refuses it: tried again a few times.
 */
async function createDatabase(admin: postgres.Sql, name: string, migrated: boolean): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const from = migrated ? await templateOfRun() : undefined;
    try {
      await admin.unsafe(`create database "${name}"${from ? ` template "${from}"` : ''}`);
      return;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (attempt >= 5 || (code !== '53300' && !(code === '3D000' && from))) throw err;
      if (code === '3D000') template = ensureTemplateDatabase(ADMIN_URL);
      else await sleep(500 * attempt);
    }
  }
}

/** A NATS prefix of its own (so subjects and streams are the file's alone) with its streams deleted at teardown. */
export async function createTestNats(t: TestLike, natsUrl = NATS_URL): Promise<{ prefix: string; nc: NatsConnection }> {
  const prefix = `t${randomName()}`;
  const nc = await connectNats(natsUrl, 'test');
  // A failed start closes what it opened: nothing else would, and an open connection keeps the process alive.
  await ensureStreams(nc, prefix).catch(async (err: unknown) => {
    await nc.close();
    throw err;
  });
  t.teardown(
    bestEffort(`deleting the streams of ${prefix}`, async () => {
      try {
        const jsm = await jetstreamManager(nc);
        for await (const s of jsm.streams.list()) {
          if (s.config.name.startsWith(prefix.toUpperCase() + '_'))
            await jsm.streams.delete(s.config.name).catch(() => {});
        }
      } finally {
        await nc.drain().catch(() => nc.close());
      }
    }),
  );
  return { prefix, nc };
}

/** Log lines of in-process services, kept for assertions (nothing secret may appear in them). */
export function captureLogger(service: string): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: createLogger({ service }, 'debug', (line) => lines.push(line)), lines };
}

export interface Platform {
  sql: Sql;
  databaseUrl: string;
  nc: NatsConnection;
  prefix: string;
  /** Base URL of the first gateway. */
  baseUrl: string;
  gateways: RunningGateway[];
  affiliates: ServiceRuntime;
  logs: string[];
  env: Record<string, string>;
  /** A merchant (growth plan unless told) with a key of the given scopes, and a client for it. */
  merchant(opts?: {
    plan?: Plan;
    scopes?: string;
    rateLimit?: number;
    name?: string;
  }): Promise<{ id: string; key: string; keyId: string; client: ApiClient }>;
  client(key?: string, baseUrl?: string): ApiClient;
}

/**
 * The platform in this process, on its own database and NATS prefix: the affiliates service and one or more
 * gateways on ephemeral loopback ports. Everything is stopped and removed at teardown.
 */
export async function startPlatform(
  t: TestLike,
  opts: {
    gateways?: number;
    env?: Record<string, string>;
    affiliatesEnv?: Record<string, string>;
    natsUrl?: string;
    /** The services' DATABASE_URL from the file's database URL (a test's TCP proxy, say); the test's own pool connects directly. */
    serviceDatabaseUrl?: (url: string) => string;
  } = {},
): Promise<Platform> {
  const db = await createTestDatabase(t);
  const bus = await createTestNats(t, opts.natsUrl);
  const logs: string[] = [];
  const env: Record<string, string> = {
    APP_ENV: 'test',
    DATABASE_URL: opts.serviceDatabaseUrl?.(db.url) ?? db.url,
    DATABASE_POOL_SIZE: '5',
    NATS_URL: opts.natsUrl ?? NATS_URL,
    NATS_PREFIX: bus.prefix,
    OPS_PORT: '0',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'debug',
    PASSWORD_HASH_COST: String(TEST_PASSWORD_COST),
    ...opts.env,
  };
  const logger = (service: string) => createLogger({ service }, 'debug', (line) => logs.push(line));
  const affiliates = await startAffiliatesService(
    loadAffiliatesConfig({ ...env, ...opts.affiliatesEnv }),
    logger('affiliates'),
  );
  const gateways: RunningGateway[] = [];
  for (let i = 0; i < (opts.gateways ?? 1); i++)
    gateways.push(await startGateway(loadGatewayConfig(env), logger(`gateway-${i}`)));
  t.teardown(
    bestEffort('stopping the gateways and the affiliates service', async () => {
      for (const g of gateways) await g.close();
      await affiliates.close();
    }),
  );
  const baseUrl = `http://127.0.0.1:${gateways[0]!.port}`;
  const platform: Platform = {
    sql: db.sql,
    databaseUrl: db.url,
    nc: bus.nc,
    prefix: bus.prefix,
    baseUrl,
    gateways,
    affiliates,
    logs,
    env,
    client: (key, url) => new ApiClient(url ?? baseUrl, key),
    async merchant(m = {}) {
      const merchant = await createMerchant(
        db.sql,
        m.name ?? `Merchant ${randomName()}`,
        m.plan === 'free' || m.plan === 'starter' ? 'growth' : (m.plan ?? 'growth'),
      );
      const key = await createKey(db.sql, merchant!['id'], m.scopes ?? 'read,write', m.rateLimit);
      if (m.plan === 'free' || m.plan === 'starter')
        await db.sql`update merchants set plan = ${m.plan} where id = ${merchant!['id']}`;
      return { id: merchant!['id'] as string, key: key.key, keyId: key.id, client: new ApiClient(baseUrl, key.key) };
    },
  };
  return platform;
}

/** A service as its own process (for kill and restart tests); resolves once it logs that it started. */
export async function spawnService(
  t: TestLike,
  service: 'affiliates' | 'gateway' | 'events' | 'commissions' | 'dispatcher',
  env: Record<string, string>,
): Promise<{ child: ChildProcess; output: string[]; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [`${ROOT}services/${service}/src/main.ts`], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        output.push(line);
        if (/"msg":"(started|listening)"/.test(line)) resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (c: Buffer) => output.push(c.toString()));
    child.once('exit', (code) =>
      reject(new Error(`${service} exited with ${code} before starting:\n${output.join('\n')}`)),
    );
    setTimeout(() => reject(new Error(`${service} did not start in 30 s:\n${output.join('\n')}`)), 30_000).unref();
  });
  return { child, output, exited };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
