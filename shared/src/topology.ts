import { DeliverPolicy, jetstreamManager, type ConsumerInfo, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Gauge, type Registry } from 'prom-client';
import { durableConsumerConfig, streamConfigs, streamName, type DurableConsumerEntry } from './catalogue.ts';
import type { Logger } from './log.ts';
import type { Worker } from './worker.ts';

/** A durable consumer a service owns, and how far back it starts when it has to be created on a stream with messages. */
export interface OwnedConsumer {
  entry: DurableConsumerEntry;
  /**
   * A consumer created while its stream already holds messages (it was deleted, or lost with a NATS store) starts
   * this long before now rather than at the stream's first message: what is older was worked on before the loss, or
   * is older than the service's reconcile horizon and taken from Postgres by its reconciler. So recreating a consumer
   * never replays days of a stream, and never skips what only the stream still has. Null: from the first message,
   * for a work-queue stream (it holds only work still to do, and JetStream allows no other start on one).
   */
  resumeWindowMs: number | null;
}

/** What the periodic check keeps in line: the catalogue's streams and this service's consumers. */
export interface Topology extends Worker {
  /** Checks now (joining a check in progress), recreating whatever is missing; resolves when it is done. */
  check(): Promise<void>;
  /** False while a stream or consumer is missing and the last check could not recreate it. */
  healthy(): boolean;
  /** Calls `listener` each time the check (re)creates the named consumer: a pull on the old one has ended. */
  onConsumerCreated(durableName: string, listener: () => void): void;
}

/** How long one JetStream API request of the check may take: the check runs every few seconds. */
const CHECK_REQUEST_TIMEOUT_MS = 2000;
/**
 * How long a stream or consumer found missing after the first check is left alone before it is created again.
 * A delete is answered (and the pulls on it told) before the server has removed its files: created again at once,
 * the new stream's files were removed under it (nats-server 2.9: publishes then failed with "no such file or
 * directory", and a consumer counted nothing pending), which no later check could see.
 */
const RECREATE_SETTLE_MS = 1000;
const settle = () => new Promise((r) => setTimeout(r, RECREATE_SETTLE_MS));

const missing = (err: unknown, what: 'stream' | 'consumer') =>
  new RegExp(`${what} not found`, 'i').test((err as Error).message);
const alreadyThere = (err: unknown) => /already in use|exists/i.test((err as Error).message);

/**
 * Streams and consumers are transport, and may disappear under a running service: a NATS restart on lost or memory
 * storage, a rebuilt cluster, an operator's delete. Every `intervalMs` (and at once when a publish or a pull finds
 * something missing) this asks JetStream for each stream and each owned consumer (one small request each, nothing
 * when all is well) and recreates what is gone. Several replicas doing so at once is safe: a create that loses the
 * race finds the other's. The consumers' info answers feed the lag gauges, so the check costs no extra request.
 */
export function startTopology(opts: {
  nc: NatsConnection;
  prefix: string;
  consumers: OwnedConsumer[];
  intervalMs: number;
  /** The num_replicas streams and consumers should have now (JETSTREAM_REPLICAS; `auto` follows the cluster). */
  replicas: () => number;
  log: Logger;
  registry: Registry;
}): Topology {
  const { nc, prefix, log } = opts;
  const lag = new Gauge({
    name: 'jetstream_consumer_lag_messages',
    help: 'Messages of the stream the durable consumer has yet to deliver (as of the last topology check)',
    labelNames: ['consumer'],
    registers: [opts.registry],
  });
  const ackPending = new Gauge({
    name: 'jetstream_consumer_ack_pending_messages',
    help: 'Messages delivered by the durable consumer and not yet acknowledged (as of the last topology check)',
    labelNames: ['consumer'],
    registers: [opts.registry],
  });
  const listeners = new Map<string, (() => void)[]>();
  let healthy = true;
  /** Missing at the first check is a new deployment or a new store: nothing is being deleted, so no settling. */
  let firstCheck = true;
  let lastProblem = '';
  let running: Promise<void> | null = null;
  let stopped = false;
  let jsmMade: Promise<JetStreamManager> | null = null;
  const manager = () => (jsmMade ??= jetstreamManager(nc, { checkAPI: false, timeout: CHECK_REQUEST_TIMEOUT_MS }));

  const ensureStream = async (jsm: JetStreamManager, cfg: ReturnType<typeof streamConfigs>[number]) => {
    try {
      const { config } = await jsm.streams.info(cfg.name);
      await scaleUp('stream', config.num_replicas, cfg.num_replicas!, { stream: cfg.name }, () =>
        jsm.streams.update(cfg.name, { num_replicas: cfg.num_replicas! }),
      );
      return;
    } catch (err) {
      if (!missing(err, 'stream')) throw err;
    }
    if (!firstCheck) await settle();
    try {
      await jsm.streams.add(cfg);
      if (!firstCheck) log.warn('stream was missing; recreated', { stream: cfg.name });
    } catch (err) {
      if (!alreadyThere(err)) throw err;
    }
  };

  /**
   * Raises a stream's or consumer's replicas in place (nats-server moves it to the new peer set and catches the new
   * peers up from the leader; it stays available meanwhile). Never lowered: a count set higher by an operator stays.
   * A consumer at 0 (created before replicas were set) follows its stream, and is given the count explicitly.
   */
  const scaleUp = async (
    what: 'stream' | 'consumer',
    current: number,
    wanted: number,
    labels: Record<string, string>,
    update: () => Promise<unknown>,
  ) => {
    if (current >= wanted) return;
    await update();
    log.info(`${what} scaled up`, { ...labels, from_replicas: current, to_replicas: wanted });
  };

  const ensureConsumer = async (jsm: JetStreamManager, owned: OwnedConsumer, replicas: number) => {
    const stream = streamName(prefix, owned.entry.stream);
    let info: ConsumerInfo | null = null;
    try {
      info = await jsm.consumers.info(stream, owned.entry.durable_name);
    } catch (err) {
      if (!missing(err, 'consumer') && !missing(err, 'stream')) throw err;
    }
    if (!info) {
      if (!firstCheck) await settle();
      const { state } = await jsm.streams.info(stream);
      const config = durableConsumerConfig(prefix, owned.entry, replicas);
      const start =
        state.messages > 0 && owned.resumeWindowMs !== null
          ? {
              deliver_policy: DeliverPolicy.StartTime,
              opt_start_time: new Date(Date.now() - owned.resumeWindowMs).toISOString(),
            }
          : {};
      try {
        info = await jsm.consumers.add(stream, { ...config, ...start });
        if (!firstCheck)
          log.warn('consumer was missing; recreated', {
            consumer: owned.entry.durable_name,
            stream,
            resumed_from: start.opt_start_time ?? 'first message',
          });
      } catch (err) {
        if (!alreadyThere(err)) throw err;
        info = await jsm.consumers.info(stream, owned.entry.durable_name);
      }
      for (const listener of listeners.get(owned.entry.durable_name) ?? []) listener();
    }
    await scaleUp(
      'consumer',
      info.config.num_replicas ?? 0,
      replicas,
      { consumer: owned.entry.durable_name, stream },
      () => jsm.consumers.update(stream, owned.entry.durable_name, { num_replicas: replicas }),
    );
    lag.set({ consumer: owned.entry.durable_name }, info.num_pending);
    ackPending.set({ consumer: owned.entry.durable_name }, info.num_ack_pending);
  };

  const checkOnce = async () => {
    if (nc.isClosed() || nc.isDraining()) return;
    const problems: string[] = [];
    try {
      const jsm = await manager();
      const replicas = opts.replicas();
      for (const cfg of streamConfigs(prefix, replicas)) {
        await ensureStream(jsm, cfg).catch((err) => problems.push(`stream ${cfg.name}: ${(err as Error).message}`));
      }
      for (const owned of opts.consumers) {
        await ensureConsumer(jsm, owned, replicas).catch((err) =>
          problems.push(`consumer ${owned.entry.durable_name}: ${(err as Error).message}`),
        );
      }
    } catch (err) {
      problems.push((err as Error).message);
    }
    healthy = problems.length === 0;
    firstCheck = false;
    const problem = problems.join('; ');
    // Once per change, not once per interval.
    if (problem && problem !== lastProblem) log.error('JetStream topology incomplete; retrying', { problem });
    if (!problem && lastProblem) log.info('JetStream topology complete again');
    lastProblem = problem;
  };

  const check = (): Promise<void> => {
    running ??= checkOnce().finally(() => {
      running = null;
    });
    return running;
  };

  const timer = setInterval(() => {
    if (!stopped) void check();
  }, opts.intervalMs);
  timer.unref();

  return {
    check,
    healthy: () => healthy,
    onConsumerCreated(durableName, listener) {
      listeners.set(durableName, [...(listeners.get(durableName) ?? []), listener]);
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
