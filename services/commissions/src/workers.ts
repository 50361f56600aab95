import type { JsMsg } from '@nats-io/jetstream';
import { inDatabaseSpan } from '@platform/shared/tracing/db';
import type { NatsConnection } from '@nats-io/transport-node';
import { COMMISSIONS_CONSUMER } from '@platform/shared/catalogue';
import type { Logger } from '@platform/shared/log';
import type { Worker } from '@platform/shared/service';
import { consumeDurable, consumeInBatches } from '@platform/shared/consume';
import type { Topology } from '@platform/shared/topology';
import { PoisonMessage } from '@platform/shared/envelope';
import { parseConversionEnvelope, type ConversionEnvelope } from './domain/envelope.ts';
import type { ProcessOutcome } from './process.ts';

/**
 * Pulls `conversion.recorded` from the shared durable consumer (every replica pulls from the same one) and works on
 * up to `concurrency` transactions at once. Messages that arrive while every slot is busy (or together, in one turn
 * of the event loop) are processed together, up to `maxBatch` in one transaction: one commit and a few statements
 * for all of them instead of each, so a backlog is worked off faster the larger it is, while a lone message is
 * processed at once. A message is acked only after its transaction committed. When a batch fails, each of its
 * messages is processed again in a transaction of its own, so one bad message cannot hold back the others; a
 * failure then naks it with a growing delay, so JetStream redelivers it (to this replica or another); a message
 * that can never be processed is terminated with a warning.
 */
export function startConversionConsumer(opts: {
  nc: NatsConnection;
  prefix: string;
  topology: Topology;
  log: Logger;
  concurrency: number;
  /** The most conversions one transaction processes. */
  maxBatch: number;
  /** Least time between the starts of two batches that are not full (consumeInBatches minIntervalMs). */
  batchIntervalMs: number;
  process: (envelopes: ConversionEnvelope[]) => Promise<ProcessOutcome[]>;
}): Worker {
  const { log, concurrency, maxBatch } = opts;

  const settle = (msg: JsMsg, envelope: ConversionEnvelope, outcome: ProcessOutcome): void => {
    const ids = { event_id: envelope.data.event_id, merchant_id: envelope.merchant_id, message_id: envelope.id };
    if (outcome.kind === 'unknown_merchant') {
      log.warn('conversion message terminated', { ...ids, reason: 'unknown merchant' });
      msg.term();
      return;
    }
    msg.ack();
    if (outcome.kind === 'duplicate')
      log.info('conversion already processed', { ...ids, delivery: msg.info.deliveryCount });
    else
      log.debug('conversion processed', {
        ...ids,
        created: outcome.created,
        voided: outcome.voided,
        flags: outcome.flags,
        promoted: outcome.promoted,
      });
  };

  const processAlone = async (msg: JsMsg, envelope: ConversionEnvelope): Promise<void> => {
    try {
      const [outcome] = await inDatabaseSpan('process conversions', () => opts.process([envelope]));
      settle(msg, envelope, outcome!);
    } catch (err) {
      if (err instanceof PoisonMessage) {
        msg.term();
        return;
      }
      const delayMs = Math.min(60_000, 1000 * 2 ** Math.min(msg.info.deliveryCount - 1, 6));
      log.error('conversion processing failed; redelivery scheduled', {
        event_id: envelope.data.event_id,
        merchant_id: envelope.merchant_id,
        message_id: envelope.id,
        delivery: msg.info.deliveryCount,
        retry_in_ms: delayMs,
        err,
      });
      msg.nak(delayMs);
    }
  };

  const handleBatch = async (batch: JsMsg[]): Promise<void> => {
    const parsed: { msg: JsMsg; envelope: ConversionEnvelope }[] = [];
    for (const msg of batch) {
      try {
        parsed.push({ msg, envelope: parseConversionEnvelope(msg.data) });
      } catch (err) {
        log.warn('conversion message terminated', { stream_seq: msg.seq, reason: (err as Error).message });
        msg.term();
      }
    }
    if (parsed.length === 0) return;
    if (parsed.length === 1) return processAlone(parsed[0]!.msg, parsed[0]!.envelope);
    let outcomes: ProcessOutcome[];
    try {
      const envelopes = new Array<ConversionEnvelope>(parsed.length);
      for (let i = 0; i < parsed.length; i++) envelopes[i] = parsed[i]!.envelope;
      outcomes = await inDatabaseSpan('process conversions', () => opts.process(envelopes));
    } catch (err) {
      log.warn('conversion batch failed; processing its messages one by one', { count: parsed.length, err });
      for (const p of parsed) await processAlone(p.msg, p.envelope);
      return;
    }
    for (let i = 0; i < parsed.length; i++) settle(parsed[i]!.msg, parsed[i]!.envelope, outcomes[i]!);
  };

  return consumeDurable({
    nc: opts.nc,
    prefix: opts.prefix,
    entry: COMMISSIONS_CONSUMER,
    topology: opts.topology,
    log,
    maxMessages: Math.max(64, concurrency * maxBatch),
    session: (messages) =>
      consumeInBatches(messages, {
        concurrency,
        maxBatch,
        gatherTurn: true,
        minIntervalMs: opts.batchIntervalMs,
        // At most a full batch per slot waiting: the rest stays with JetStream (and other replicas).
        maxWaiting: concurrency * maxBatch,
        log,
        name: 'conversion consumer',
        handleBatch,
      }),
  });
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
      (err) => opts.log.error(`${opts.name} pass failed`, { err }),
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
