import { jetstream, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { DISPATCHER_ATTEMPTS_CONSUMER, streamName, type WebhookAttemptHint } from '@platform/shared/catalogue';
import type { Sql } from '@platform/shared/db';
import { isId } from '@platform/shared/ids';
import type { Logger } from '@platform/shared/log';
import { decodeJson, ensureDurableConsumer } from '@platform/shared/nats';
import type { Worker } from '@platform/shared/service';
import { inOneTrip } from '@platform/shared/transactions';
import type { AttemptEngine } from './attempts.ts';
import { claimDue, clearHints, lockEndpointsOf, relaxCommit, type ClaimedDelivery } from './queries/deliveries.ts';

/** Hints claimed per transaction at most. */
const HINT_BATCH = 256;
/** A short pause before JetStream offers hints again when Postgres failed. */
const DATABASE_RETRY_MS = 1000;

/**
 * Works the hint stream (sweeper, replays, test events): takes as many buffered hints as the replica has free
 * slots, claims the named deliveries in one transaction (leases, per-endpoint room), then acks the hints at once.
 * The lease now protects each delivery; holding a message during the HTTP call would only count it against
 * max_ack_pending for every endpoint (nats-server#6093). A hint whose delivery could not be claimed (its endpoint
 * had no room) is forgotten in Postgres, so the sweeper hints it again as soon as there is room. While every slot
 * is busy the hints wait unacknowledged, and the consumer stops pulling more.
 */
export async function startHintConsumer(opts: { sql: Sql; nc: NatsConnection; prefix: string; log: Logger; engine: AttemptEngine; concurrency: number; claim: { replicaId: string; leaseMs: number; endpointConcurrency: number } }): Promise<Worker> {
  const { sql, nc, prefix, log, engine } = opts;
  await ensureDurableConsumer(nc, prefix, DISPATCHER_ATTEMPTS_CONSUMER);
  const consumer = await jetstream(nc).consumers.get(streamName(prefix, 'WEBHOOK_ATTEMPTS'), DISPATCHER_ATTEMPTS_CONSUMER.durable_name);
  const messages = await consumer.consume({ max_messages: Math.max(opts.concurrency, 10) });
  const buffered: { m: JsMsg; deliveryId: string }[] = [];
  const maxBuffered = Math.max(opts.concurrency, HINT_BATCH);
  let stopping = false;
  let draining: Promise<void> | null = null;

  const claimBatch = async (batch: { m: JsMsg; deliveryId: string }[], reserved: number) => {
    const ids = [...new Set(batch.map((b) => b.deliveryId))];
    let claimed: ClaimedDelivery[];
    try {
      // One round trip. The claim cleared the hints of what it took; the others are
      // forgotten so that the sweeper hints them again as soon as their endpoint has room.
      [, , claimed] = await inOneTrip<[void, void, ClaimedDelivery[], void]>(sql, (tx) => [
        relaxCommit(tx),
        lockEndpointsOf(tx, ids),
        claimDue(tx, { ...opts.claim, deliveryIds: ids, limit: reserved }),
        clearHints(tx, ids),
      ]);
    } catch (err) {
      log.warn('could not claim hinted deliveries; the hints will come again', { count: ids.length, err: (err as Error).message });
      engine.start([], reserved);
      for (const b of batch) b.m.nak(DATABASE_RETRY_MS);
      return;
    }
    for (const b of batch) b.m.ack();
    engine.start(claimed, reserved);
  };

  const drain = async () => {
    while (buffered.length > 0) {
      if (stopping || engine.stopping()) {
        // Buffered when we stopped: another replica (or this one restarted) takes them now.
        for (const b of buffered.splice(0)) b.m.nak();
        return;
      }
      const reserved = engine.reserve(Math.min(buffered.length, HINT_BATCH));
      if (reserved === 0) {
        await engine.slotFreed();
        continue;
      }
      await claimBatch(buffered.splice(0, reserved), reserved);
    }
  };
  const kick = () => {
    draining ??= drain().finally(() => {
      draining = null;
      if (buffered.length > 0) kick();
    });
    return draining;
  };

  const loop = (async () => {
    for await (const m of messages) {
      let hint: WebhookAttemptHint | null = null;
      try {
        hint = decodeJson<WebhookAttemptHint>(m.data);
      } catch {
        // terminated below
      }
      if (!isId('dlv', hint?.delivery_id)) {
        m.term();
        continue;
      }
      buffered.push({ m, deliveryId: hint.delivery_id });
      const work = kick();
      if (buffered.length >= maxBuffered) await work;
    }
  })();

  return {
    async stop() {
      stopping = true;
      await messages.close().catch(() => {});
      await loop.catch(() => {});
      await kick();
    },
  };
}
