import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import postgres from 'postgres';
import type { Sql } from '@platform/shared/db';
import type { Infra } from '../scripts/infra.ts';
import type { Child } from './procs.ts';

/** What a bench run holds and gives back however it ends (set each field once it exists). */
export interface RunResources {
  infra?: Infra;
  /** The run's own database: dropped at the end. */
  database?: string;
  sql?: Sql;
  nc?: NatsConnection;
  /** NATS prefixes whose streams are deleted at the end. */
  prefixes: string[];
  /** Stopped at the end, last started first. */
  children: Child[];
  /** Gives everything back, once, whoever calls it first: the run's end, its failure, SIGINT or SIGTERM. */
  release(): Promise<void>;
}

export function holdRunResources(log: (line: string) => void): RunResources {
  let releasing: Promise<void> | undefined;
  const run: RunResources = {
    prefixes: [],
    children: [],
    release: () =>
      (releasing ??= (async () => {
        for (const child of [...run.children].reverse()) await child.stop().catch(() => {});
        await run.sql?.end({ timeout: 2 }).catch(() => {});
        if (run.infra && run.database) {
          // Kept on request, to look into afterwards (the plans of a part's statements at size, say).
          if (process.env['BENCH_KEEP_DATABASE'] === '1') log(`kept database ${run.database} (BENCH_KEEP_DATABASE=1)`);
          else await dropDatabase(run.infra.adminUrl, run.database, log);
        }
        if (run.nc) {
          for (const prefix of run.prefixes) await deleteStreams(run.nc, prefix, log);
          await run.nc.drain().catch(() => {});
        }
        await run.infra?.stop();
      })()),
  };
  // `on`, not `once`: Ctrl-C reaches npm's process too, which forwards a second SIGINT that must not cut the
  // clean-up short.
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (interrupted) return;
      interrupted = true;
      log(`${signal}: stopping the services and dropping the bench database`);
      void run.release().finally(() => process.exit(130));
    });
  }
  return run;
}

async function dropDatabase(adminUrl: string, name: string, log: (line: string) => void): Promise<void> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin
    .unsafe(`drop database if exists "${name}" with (force)`)
    .catch((err) => log(`could not drop ${name}: ${(err as Error).message}`));
  await admin.end({ timeout: 2 }).catch(() => {});
}

async function deleteStreams(nc: NatsConnection, prefix: string, log: (line: string) => void): Promise<void> {
  try {
    const jsm = await jetstreamManager(nc);
    for await (const s of jsm.streams.list()) {
      if (s.config.name.startsWith(`${prefix.toUpperCase()}_`)) await jsm.streams.delete(s.config.name).catch(() => {});
    }
  } catch (err) {
    log(`could not delete the ${prefix} streams: ${(err as Error).message}`);
  }
}
