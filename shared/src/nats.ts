import { connect, createInbox, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { durableConsumerConfig, streamConfigs, streamName, type DurableConsumerEntry } from './catalogue.ts';
import { ConfigError, type CommonConfig } from './config.ts';

type NatsCredentials = Pick<NodeConnectionOptions, 'user' | 'pass' | 'tls'>;

/**
 * The process's NATS user and TLS settings (NATS_USER, NATS_PASSWORD, NATS_TLS_*), for `connectNats`. A half-given
 * pair stops the process at start, naming the variable missing. The certificate files are read by the client.
 */
export function natsCredentials(
  config: Pick<CommonConfig, 'NATS_USER' | 'NATS_PASSWORD' | 'NATS_TLS_CA' | 'NATS_TLS_CERT' | 'NATS_TLS_KEY'>,
): NatsCredentials {
  if (config.NATS_USER && !config.NATS_PASSWORD) throw new ConfigError('NATS_PASSWORD', 'is required with NATS_USER');
  if (config.NATS_PASSWORD && !config.NATS_USER) throw new ConfigError('NATS_USER', 'is required with NATS_PASSWORD');
  if (config.NATS_TLS_CERT && !config.NATS_TLS_KEY)
    throw new ConfigError('NATS_TLS_KEY', 'is required with NATS_TLS_CERT');
  if (config.NATS_TLS_KEY && !config.NATS_TLS_CERT)
    throw new ConfigError('NATS_TLS_CERT', 'is required with NATS_TLS_KEY');
  const tls = {
    ...(config.NATS_TLS_CA ? { caFile: config.NATS_TLS_CA } : {}),
    ...(config.NATS_TLS_CERT ? { certFile: config.NATS_TLS_CERT, keyFile: config.NATS_TLS_KEY } : {}),
  };
  return {
    ...(config.NATS_USER ? { user: config.NATS_USER, pass: config.NATS_PASSWORD } : {}),
    ...(Object.keys(tls).length ? { tls } : {}),
  };
}

/**
 * `options.noAsyncTraces`: request errors lose the caller's stack, and requests no longer capture one each.
 * `user`, `pass` and `tls`: from `natsCredentials`.
 */
export async function connectNats(
  url: string,
  name: string,
  options: Pick<NodeConnectionOptions, 'noAsyncTraces'> & NatsCredentials = {},
): Promise<NatsConnection> {
  const inboxPrefix = options.user ? userInboxPrefix(options.user) : undefined;
  const nc = await connect({
    // NATS_URL's seed servers; the client adds the rest of the cluster as the servers gossip it.
    servers: url.split(',').map((server) => server.trim()),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    timeout: 3000,
    ...(inboxPrefix ? { inboxPrefix } : {}),
    ...options,
  });
  if (inboxPrefix) inboxPrefixes.set(nc, inboxPrefix);
  return nc;
}

/**
 * A process with a NATS user takes its replies under an inbox of that user's (`_INBOX.<user>.…`), which its
 * permissions let it subscribe to, and no other process's (shared/src/nats-access.ts).
 */
export const userInboxPrefix = (user: string) => `_INBOX.${user}`;
const inboxPrefixes = new WeakMap<NatsConnection, string>();

/** A new inbox subject of the connection: under its user's inbox prefix when it has a user. */
export const natsInbox = (nc: NatsConnection): string => createInbox(inboxPrefixes.get(nc));

/**
 * Creates the catalogue's streams with `replicas` (default 1, what a single server takes), or brings an existing
 * one's settings in line. Safe to run from every replica. An existing stream keeps its replicas: raising them is the
 * topology check's, which tries again while the cluster cannot place them (a server down), where a start would fail.
 */
export async function ensureStreams(nc: NatsConnection, prefix: string, replicas = 1): Promise<void> {
  const jsm = await whileJetStreamSettles(() => jetstreamManager(nc));
  for (const cfg of streamConfigs(prefix, replicas)) await whileJetStreamSettles(() => ensureStream(jsm, cfg));
}

async function ensureStream(jsm: JetStreamManager, cfg: ReturnType<typeof streamConfigs>[number]): Promise<void> {
  try {
    const { config: existing } = await jsm.streams.info(cfg.name);
    const { name, ...update } = cfg;
    await jsm.streams.update(name, { ...update, num_replicas: existing.num_replicas });
  } catch (err) {
    if (!/stream not found/i.test((err as Error).message)) throw err;
    try {
      await jsm.streams.add(cfg);
    } catch (addErr) {
      // Another replica created it between our info and add.
      if (!/already in use|exists/i.test((addErr as Error).message)) throw addErr;
    }
  }
}

/** How long a start keeps asking JetStream while its cluster forms or elects leaders, before it gives up. */
const SETTLE_BOUND_MS = 30_000;
/**
 * What a JetStream cluster answers while it is forming or electing a leader: nothing in time, no responder on the API
 * subject, "JetStream system temporarily unavailable", or a stream or consumer that is not current. And what a
 * server answers a stream it cannot make the store folder of: it removes an account's folder when the account's
 * last stream is deleted, and a stream created at that moment gets "could not create storage directory" (or "error
 * creating store for stream", where what is in the way is not gone yet).
 */
const settling = (err: unknown) => {
  const { message } = err as Error;
  return (
    /^timeout$|no responders|temporarily unavailable|not current|no leader|leader not/i.test(message) ||
    /could not create storage dir.*(no such file|not a directory)|error creating store for stream/i.test(message)
  );
};

/** Runs a JetStream step of a start, again while the cluster is settling (a start then fails for nothing passing). */
async function whileJetStreamSettles<T>(step: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + SETTLE_BOUND_MS;
  for (let pauseMs = 250; ; pauseMs = Math.min(pauseMs * 2, 2000)) {
    try {
      return await step();
    } catch (err) {
      if (!settling(err) || Date.now() + pauseMs > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}

export const encodeJson = (value: unknown): Uint8Array => Buffer.from(JSON.stringify(value));
export const decodeJson = <T>(data: Uint8Array): T =>
  JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as T;

/**
 * Creates a catalogue durable consumer with `replicas`, or brings an existing one's updatable settings in line (its
 * replicas are the topology check's to raise, as a stream's). Safe to run from every replica at start.
 */
export async function ensureDurableConsumer(
  nc: NatsConnection,
  prefix: string,
  entry: DurableConsumerEntry,
  replicas: number,
): Promise<void> {
  const jsm = await whileJetStreamSettles(() => jetstreamManager(nc));
  await whileJetStreamSettles(() => ensureConsumer(jsm, prefix, entry, replicas));
}

async function ensureConsumer(
  jsm: JetStreamManager,
  prefix: string,
  entry: DurableConsumerEntry,
  replicas: number,
): Promise<void> {
  const stream = streamName(prefix, entry.stream);
  const config = durableConsumerConfig(prefix, entry, replicas);
  try {
    await jsm.consumers.info(stream, config.durable_name);
  } catch (err) {
    if (!/consumer not found/i.test((err as Error).message)) throw err;
    try {
      await jsm.consumers.add(stream, config);
      return;
    } catch (addErr) {
      // Another replica created it between our info and add: fall through to the update.
      if (!/already in use|exists/i.test((addErr as Error).message)) throw addErr;
    }
  }
  await jsm.consumers.update(stream, config.durable_name, {
    description: config.description,
    ack_wait: config.ack_wait,
    max_deliver: config.max_deliver,
    max_ack_pending: config.max_ack_pending,
  });
}
