import type { NatsConnection } from '@nats-io/transport-node';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { encryptionKey, type CommonConfig, type OutboxConfig, type TopologyConfig } from './config.ts';
import { connectDatabase, type Sql } from './db.ts';
import { createLogger, type Logger } from './log.ts';
import { migrate } from './migrate.ts';
import { jetStreamReplicas } from './jetstream-replicas.ts';
import { connectNats, ensureDurableConsumer, ensureStreams, natsCredentials } from './nats.ts';
import { serveOperations, type Operation } from './operation.ts';
import { startOpsServer } from './ops-server.ts';
import { databaseGauge } from './database-gauge.ts';
import { oldestUnpublishedAgeSeconds, startOutboxPurge } from './outbox.ts';
import { startOutboxRelay, type OutboxRelay } from './outbox-relay.ts';
import { trackReadiness } from './readiness.ts';
import { startTopology, type OwnedConsumer, type Topology } from './topology.ts';
import type { Worker } from './worker.ts';

export interface ServiceRuntime {
  name: string;
  sql: Sql;
  nc: NatsConnection;
  log: Logger;
  registry: Registry;
  relay: OutboxRelay | null;
  /** The streams and this service's consumers, checked every TOPOLOGY_CHECK_INTERVAL_MS and recreated when missing. */
  topology: Topology;
  opsPort: number;
  close(): Promise<void>;
}

/** How long `close` waits for workers and the relay to finish before it closes connections under them. */
const DRAIN_BOUND_MS = 10_000;

// Services meet `Worker` here, beside startService; shared/ modules import it from worker.ts (no import circle).
export type { Worker } from './worker.ts';

/**
 * Starts what every service process has: Postgres (migrated), NATS with the catalogue's streams, the ops server,
 * the outbox relay when asked, the service's operations, and its workers. `close` drains in reverse order.
 */
export async function startService(opts: {
  name: string;
  config: CommonConfig & TopologyConfig & { OPS_PORT: number };
  /** The service's operations, or a function that builds them on the service's own pool (for state they keep). */
  operations: Operation[] | ((runtime: { sql: Sql }) => Operation[]);
  /** The durable consumers this service pulls from (consume.ts consumeDurable): ensured with the streams. */
  consumers?: OwnedConsumer[];
  /**
   * The outbox settings when this process runs an outbox relay, and with it the purge of published rows past their
   * retention; false when it runs neither.
   */
  outboxRelay: OutboxConfig | false;
  workers?: (runtime: Omit<ServiceRuntime, 'close'>) => Worker[] | Promise<Worker[]>;
  log?: Logger;
}): Promise<ServiceRuntime> {
  const { name, config } = opts;
  const log = opts.log ?? createLogger({ service: name }, config.LOG_LEVEL);
  const sql = connectDatabase(config.DATABASE_URL, {
    max: config.DATABASE_POOL_SIZE,
    applicationName: name,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    lockTimeoutMs: config.DATABASE_LOCK_TIMEOUT_MS,
  });
  const applied = await migrate(sql);
  if (applied.length) log.info('migrations applied', { applied });
  const nc = await connectNats(config.NATS_URL, name, natsCredentials(config));
  const replicas = jetStreamReplicas(nc, config.JETSTREAM_REPLICAS);
  await ensureStreams(nc, config.NATS_PREFIX, replicas());

  const registry = new Registry();
  registry.setDefaultLabels({ service: name });
  collectDefaultMetrics({ register: registry });
  const consumers = opts.consumers ?? [];
  const topology = startTopology({
    nc,
    prefix: config.NATS_PREFIX,
    consumers,
    intervalMs: config.TOPOLOGY_CHECK_INTERVAL_MS,
    replicas,
    log,
    registry,
  });
  await topology.check();
  for (const c of consumers) await ensureDurableConsumer(nc, config.NATS_PREFIX, c.entry, replicas());
  const readiness = trackReadiness(sql, nc);
  const ready = () => readiness.ready() && topology.healthy();
  const ops = await startOpsServer({ port: config.OPS_PORT, registry, ready });
  const outbox = opts.outboxRelay;
  const relay = outbox
    ? startOutboxRelay({
        sql,
        nc,
        prefix: config.NATS_PREFIX,
        log,
        minIntervalMs: outbox.OUTBOX_RELAY_INTERVAL_MS,
        onRefused: () => void topology.check(),
        registry,
      })
    : null;
  const outboxPurge = outbox ? startOutboxPurge(sql, log, outbox.OUTBOX_RETENTION_DAYS) : null;
  if (outbox) {
    databaseGauge({
      registry,
      name: 'outbox_oldest_unpublished_age_seconds',
      help: 'Age of the oldest outbox row not yet published to JetStream (0 when none)',
      read: () => oldestUnpublishedAgeSeconds(sql),
    });
  }
  const serving = serveOperations({
    nc,
    sql,
    prefix: config.NATS_PREFIX,
    operations: typeof opts.operations === 'function' ? opts.operations({ sql }) : opts.operations,
    log,
    registry,
    encryptionKey: encryptionKey(config),
  });
  const partial = { name, sql, nc, log, registry, relay, topology, opsPort: ops.port };
  const workers = opts.workers ? await opts.workers(partial) : [];
  log.info('started', { ops_port: ops.port });

  return {
    ...partial,
    async close() {
      await serving.drain();
      const stopped = (async () => {
        for (const w of workers.reverse()) await w.stop();
        await relay?.stop();
        await outboxPurge?.stop();
        await topology.stop();
      })();
      // Work that waits on a database that has gone away may never settle (the driver can leave a query queued for
      // a connection that will not come back): after the bound, the connections are closed, which fails it.
      // A part that fails to stop (its connection lost) must not keep the rest from closing.
      const settled = stopped.then(
        () => true,
        (err: unknown) => {
          log.warn('a worker failed to stop; closing connections', { err });
          return true;
        },
      );
      const inTime = await Promise.race([
        settled,
        new Promise<boolean>((r) => setTimeout(r, DRAIN_BOUND_MS, false).unref()),
      ]);
      if (!inTime)
        log.warn('work still in flight when the drain bound passed; closing connections', { bound_ms: DRAIN_BOUND_MS });
      readiness.stop();
      await ops.close();
      await nc.drain().catch(() => {});
      await sql.end({ timeout: 5 }).catch((err: unknown) => log.warn('closing the database pool failed', { err }));
      log.info('stopped');
    },
  };
}
