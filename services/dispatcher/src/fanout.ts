import { jetstream, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { DISPATCHER_FANOUT_CONSUMER, DOMAIN_EVENT_TYPES, streamName, type DomainEvent } from '@platform/shared/catalogue';
import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { decodeJson, ensureDurableConsumer } from '@platform/shared/nats';
import type { Worker } from '@platform/shared/service';
import type { HintPublisher } from './hints.ts';
import { fanOut } from './queries/deliveries.ts';
import { consumeConcurrently } from '@platform/shared/consume';

const FANOUT_CONCURRENCY = 8;
const PG_FOREIGN_KEY_VIOLATION = '23503';
/** A short pause before JetStream offers the message again when Postgres failed; never used to schedule deliveries. */
const DATABASE_RETRY_MS = 1000;

export function parseDomainEvent(data: Uint8Array): DomainEvent | null {
  try {
    const e = decodeJson<DomainEvent>(data);
    const ok =
      typeof e?.id === 'string' &&
      /^msg_[0-9a-z]{26}$/.test(e.id) &&
      (DOMAIN_EVENT_TYPES as readonly string[]).includes(e.type) &&
      typeof e.merchant_id === 'string' &&
      typeof e.created_at === 'string' &&
      !Number.isNaN(Date.parse(e.created_at)) &&
      typeof e.data === 'object' &&
      e.data !== null;
    return ok ? e : null;
  } catch {
    return null;
  }
}

/**
 * Consumes the domain-event stream durably and turns each event into Postgres rows (message + deliveries) in one
 * transaction, acking only after the commit: an event is never acknowledged before it is recorded. Then hints the
 * new deliveries so the first attempt starts at once.
 */
export async function startFanOut(opts: { sql: Sql; nc: NatsConnection; prefix: string; log: Logger; hints: HintPublisher }): Promise<Worker> {
  const { sql, nc, prefix, log, hints } = opts;
  await ensureDurableConsumer(nc, prefix, DISPATCHER_FANOUT_CONSUMER);
  const consumer = await jetstream(nc).consumers.get(streamName(prefix, 'DOMAIN_EVENTS'), DISPATCHER_FANOUT_CONSUMER.durable_name);
  const messages = await consumer.consume({ max_messages: 100 });

  const handle = async (m: JsMsg, stopping: () => boolean) => {
    if (stopping()) {
      m.nak();
      return;
    }
    const event = parseDomainEvent(m.data);
    if (!event) {
      log.error('undecodable domain event; terminated', { subject: m.subject, seq: m.seq });
      m.term();
      return;
    }
    try {
      const created = await sql.begin((tx) => fanOut(tx, event));
      m.ack();
      if (created.length > 0) log.debug('event fanned out', { message_id: event.id, type: event.type, deliveries: created.length });
      await hints.publish(created);
    } catch (err) {
      if ((err as { code?: string }).code === PG_FOREIGN_KEY_VIOLATION) {
        // No such merchant: retrying cannot help, and redelivering it forever would only add noise.
        log.error('domain event for an unknown merchant; terminated', { message_id: event.id });
        m.term();
        return;
      }
      log.warn('fan-out failed; JetStream will offer the event again', { message_id: event.id, err: (err as Error).message });
      m.nak(DATABASE_RETRY_MS);
    }
  };

  return consumeConcurrently(messages, { concurrency: FANOUT_CONCURRENCY, log, name: 'fan-out', handle });
}
