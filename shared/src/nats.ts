import { connect, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { durableConsumerConfig, streamConfigs, streamName, type DurableConsumerEntry } from './catalogue.ts';

/** `options.noAsyncTraces`: request errors lose the caller's stack, and requests no longer capture one each. */
export async function connectNats(
  url: string,
  name: string,
  options: Pick<NodeConnectionOptions, 'noAsyncTraces'> = {},
): Promise<NatsConnection> {
  return connect({
    servers: url,
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    timeout: 3000,
    ...options,
  });
}

/** Creates the catalogue's streams, or brings an existing one's settings in line. Safe to run from every replica. */
export async function ensureStreams(nc: NatsConnection, prefix: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  for (const cfg of streamConfigs(prefix)) {
    try {
      await jsm.streams.info(cfg.name);
      const { name, ...update } = cfg;
      await jsm.streams.update(name, update);
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
}

export const encodeJson = (value: unknown): Uint8Array => Buffer.from(JSON.stringify(value));
export const decodeJson = <T>(data: Uint8Array): T =>
  JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as T;

/**
 * Creates a catalogue durable consumer, or brings an existing one's updatable settings in line. Safe to run from
 * every replica at start.
 */
export async function ensureDurableConsumer(
  nc: NatsConnection,
  prefix: string,
  entry: DurableConsumerEntry,
): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const stream = streamName(prefix, entry.stream);
  const config = durableConsumerConfig(prefix, entry);
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
