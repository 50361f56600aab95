import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { DISPATCHER_ATTEMPTS_CONSUMER, type WebhookAttemptHint } from '@platform/shared/catalogue';
import { consumeDurable } from '@platform/shared/consume';
import type { Sql } from '@platform/shared/db';
import { isId } from '@platform/shared/ids';
import type { Logger } from '@platform/shared/log';
import { decodeJson } from '@platform/shared/nats';
import type { Worker } from '@platform/shared/service';
import { inOneTrip } from '@platform/shared/transactions';
import { tracingEnabled } from '@platform/shared/tracing/context';
import { inConsumerBatchSpan } from '@platform/shared/tracing/nats';
import type { AttemptEngine, ClaimSettings, ConsumerWorkerOptions } from './attempts.ts';
import { claimDue, clearHints, lockEndpointsOf, relaxCommit, type ClaimedDelivery } from './queries/claims.ts';

/**
 * Leases the named deliveries that are due and have endpoint room (at most `limit`), in one round trip. The claim
 * clears the hints of what it took; the others are forgotten so that the sweeper hints them again as soon as their
 * endpoint has room.
 */
export async function claimNamed(
  sql: Sql,
  claim: ClaimSettings,
  deliveryIds: string[],
  limit: number,
): Promise<ClaimedDelivery[]> {
  const { claimed } = await inOneTrip(sql, (tx) => ({
    relaxed: relaxCommit(tx),
    locked: lockEndpointsOf(tx, deliveryIds),
    claimed: claimDue(tx, { ...claim, deliveryIds, limit }),
    cleared: clearHints(tx, deliveryIds),
  }));
  return claimed;
}

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
export function startHintConsumer(opts: ConsumerWorkerOptions & { concurrency: number }): Worker {
  return consumeDurable({
    nc: opts.nc,
    prefix: opts.prefix,
    entry: DISPATCHER_ATTEMPTS_CONSUMER,
    topology: opts.topology,
    log: opts.log,
    maxMessages: Math.max(opts.concurrency, 10),
    session: (messages) => workHints(messages, opts),
  });
}

/** One pull's hints, until `stop` (consumeDurable starts another when the consumer had to be recreated). */
function workHints(
  messages: ConsumerMessages,
  opts: { sql: Sql; log: Logger; engine: AttemptEngine; concurrency: number; claim: ClaimSettings },
) {
  const { log, engine } = opts;
  const buffered: { m: JsMsg; deliveryId: string }[] = [];
  const maxBuffered = Math.max(opts.concurrency, HINT_BATCH);
  let stopping = false;
  let draining: Promise<void> | null = null;

  const claimBatch = async (batch: { m: JsMsg; deliveryId: string }[], reserved: number) => {
    const ids = [...new Set(batch.map((b) => b.deliveryId))];
    let claimed: ClaimedDelivery[];
    const claim = () => claimNamed(opts.sql, opts.claim, ids, reserved);
    // Hints published for a request carry its trace: the claim continues it (the attempts continue their message's).
    const traced = tracingEnabled() ? batch.filter((b) => b.m.headers?.has('traceparent')).map((b) => b.m) : [];
    try {
      claimed = await (traced.length > 0 ? inConsumerBatchSpan('hints', traced, claim) : claim());
    } catch (err) {
      log.warn('could not claim hinted deliveries; the hints will come again', { count: ids.length, err });
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
      // drain does not reject: claimBatch answers a failed claim by naking the hints.
      if (buffered.length > 0) void kick();
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
