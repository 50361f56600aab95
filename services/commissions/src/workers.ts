import { jetstream, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { COMMISSIONS_CONSUMER, streamName } from '@platform/shared/catalogue';
import type { Logger } from '@platform/shared/log';
import { ensureDurableConsumer } from '@platform/shared/nats';
import type { Worker } from '@platform/shared/service';
import { consumeConcurrently } from '@platform/shared/consume';
import { parseConversionEnvelope, PoisonMessage, type ConversionEnvelope } from './engine/envelope.ts';
import type { ProcessOutcome } from './engine/process.ts';

/**
 * Pulls `conversion.recorded` from the shared durable consumer (every replica pulls from the same one) and works on
 * up to `concurrency` messages at once. A message is acked only after its transaction committed; a failure naks it
 * with a growing delay, so JetStream redelivers it (to this replica or another); a message that can never be
 * processed is terminated with a warning.
 */
export async function startConversionConsumer(opts: {
  nc: NatsConnection;
  prefix: string;
  log: Logger;
  concurrency: number;
  process: (envelope: ConversionEnvelope) => Promise<ProcessOutcome>;
}): Promise<Worker> {
  const { nc, prefix, log, concurrency } = opts;
  await ensureDurableConsumer(nc, prefix, COMMISSIONS_CONSUMER);
  const consumer = await jetstream(nc).consumers.get(streamName(prefix, COMMISSIONS_CONSUMER.stream), COMMISSIONS_CONSUMER.durable_name);
  const messages = await consumer.consume({ max_messages: Math.max(32, concurrency * 8) });

  void (async () => {
    for await (const s of messages.status()) {
      if (s.type === 'consumer_deleted' || s.type === 'consumer_not_found' || s.type === 'stream_not_found') {
        log.warn('conversion consumer status', { status: s.type });
      }
    }
  })().catch(() => {});

  const handle = async (msg: JsMsg): Promise<void> => {
    let envelope: ConversionEnvelope;
    try {
      envelope = parseConversionEnvelope(msg.data);
    } catch (err) {
      log.warn('conversion message terminated', { stream_seq: msg.seq, reason: (err as Error).message });
      msg.term();
      return;
    }
    const ids = { event_id: envelope.data.event_id, merchant_id: envelope.merchant_id, message_id: envelope.id };
    try {
      const outcome = await opts.process(envelope);
      if (outcome.kind === 'unknown_merchant') {
        log.warn('conversion message terminated', { ...ids, reason: 'unknown merchant' });
        msg.term();
        return;
      }
      msg.ack();
      if (outcome.kind === 'duplicate') log.info('conversion already processed', { ...ids, delivery: msg.info.deliveryCount });
      else log.debug('conversion processed', { ...ids, created: outcome.created, voided: outcome.voided, flags: outcome.flags, promoted: outcome.promoted });
    } catch (err) {
      if (err instanceof PoisonMessage) {
        msg.term();
        return;
      }
      const delayMs = Math.min(60_000, 1000 * 2 ** Math.min(msg.info.deliveryCount - 1, 6));
      log.error('conversion processing failed; redelivery scheduled', { ...ids, delivery: msg.info.deliveryCount, retry_in_ms: delayMs, err: (err as Error).message });
      msg.nak(delayMs);
    }
  };

  return consumeConcurrently(messages, { concurrency, log, name: 'conversion consumer', handle });
}

/** Runs `pass` every `intervalMs`, never two at once; `runNow` runs one on demand (waiting for one in progress). */
export function startIntervalWorker(opts: {
  intervalMs: number;
  log: Logger;
  name: string;
  pass: () => Promise<number>;
}): Worker & { runNow(): Promise<number> } {
  let running: Promise<number> | null = null;
  let stopped = false;
  const runNow = async (): Promise<number> => {
    while (running) await running.catch(() => 0);
    running = opts.pass().finally(() => {
      running = null;
    });
    return running;
  };
  const timer = setInterval(() => {
    if (stopped || running) return;
    runNow().then(
      (count) => {
        if (count > 0) opts.log.info(`${opts.name} pass`, { count });
      },
      (err) => opts.log.error(`${opts.name} pass failed`, { err: (err as Error).message }),
    );
  }, opts.intervalMs);
  timer.unref();
  return {
    runNow,
    async stop() {
      stopped = true;
      clearInterval(timer);
      if (running) await running.catch(() => 0);
    },
  };
}
