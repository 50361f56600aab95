import type { NatsConnection } from '@nats-io/transport-node';
import { Counter, type Registry } from 'prom-client';
import type { Topology } from '@platform/shared/topology';
import { createBatcher, type BatchShape } from '@platform/shared/batcher';
import type { Sql } from '@platform/shared/db';
import { decryptSecretWithAny, secretPlace, UndecryptableSecret } from '@platform/shared/crypto';
import type { Logger } from '@platform/shared/log';
import type { Worker } from '@platform/shared/service';
import { inOneTrip } from '@platform/shared/transactions';
import { nextAttemptDelayMs, WEBHOOK_MAX_ATTEMPTS, webhookHeaders } from '@platform/shared/webhooks';
import type { Dispatcher } from 'undici';
import { judgeAttempt, type AttemptOutcome } from './domain/verdict.ts';
import {
  deadLetterWaiting,
  recordAttempts,
  settleEndpoints,
  type AttemptRecord,
  type EndpointTally,
} from './queries/attempts.ts';
import { claimDue, lockEndpoints, relaxCommit, type ClaimedDelivery } from './queries/claims.ts';
import { signingSecrets } from './domain/signing.ts';
import { postWebhook } from './send.ts';
import { contextOfCarrier, tracingEnabled } from '@platform/shared/tracing/context';

/** What the delivery log shows for an attempt that could not be signed: the reason, nothing of the secret. */
export const UNSIGNABLE_ERROR = 'not sent: the endpoint secret cannot be decrypted with the configured encryption keys';

const unsignedOutcome = (): AttemptOutcome => ({
  attemptedAt: new Date(),
  statusCode: null,
  error: UNSIGNABLE_ERROR,
  durationMs: 0,
  responseBody: '',
  retryAfterMs: null,
});

export interface AttemptSettings {
  replicaId: string;
  /** ENCRYPTION_KEY, then ENCRYPTION_KEYS_PREVIOUS: the keys an endpoint's secret may be encrypted under. */
  secretKeys: Buffer[];
  backoffScale: number;
  attemptTimeoutMs: number;
  leaseMs: number;
  concurrency: number;
  endpointConcurrency: number;
}

/** What a lease names: the replica, how long it lasts, and how many one endpoint may hold across replicas. */
export interface ClaimSettings {
  replicaId: string;
  leaseMs: number;
  endpointConcurrency: number;
}

/** What the workers that feed the engine from a consumer (fan-out, hints) share. */
export interface ConsumerWorkerOptions {
  sql: Sql;
  nc: NatsConnection;
  prefix: string;
  topology: Topology;
  log: Logger;
  engine: AttemptEngine;
  claim: ClaimSettings;
}

/**
 * The recorder's batches: a bounded number of attempts per transaction (more wait for the next one), and two
 * transactions in flight (a new batch does not wait for a slow one to commit). A batch starts as soon as a recorder
 * is free: an attempt's slot stays taken until its outcome commits, so waiting would only idle it.
 */
const RECORDING: BatchShape = { slots: 2, largestBatch: 500, leastIntervalMs: null };
/** Decrypted endpoint secrets kept (by endpoint and encrypted form: a rotation is a new entry, never a stale one). */
const SECRET_CACHE_SIZE = 10_000;

/**
 * The replica's attempt slots (WEBHOOK_CONCURRENCY) and everything that happens in them. Work comes in already
 * leased, from three places that each claim in Postgres only as many deliveries as they reserved slots for: the
 * fan-out (new deliveries, claimed in the transaction that created them), the hint consumer (deliveries the sweeper,
 * a replay or a test event hinted), and the recorder itself. A slot is held from the claim until the outcome is
 * committed (the lease is released in that commit), so a replica never holds more leases than it has slots.
 *
 * Outcomes are recorded in batches (shared/src/batcher.ts): whatever finished while the previous recording
 * transaction ran goes into the next one (two at once, so one slow commit does not hold the other up). In the same
 * transaction the slots it frees go on with due deliveries of the endpoints that just succeeded, and of endpoints
 * this replica created deliveries for but had no room for then ("wanting"): a healthy endpoint's backlog drains at
 * its concurrency without hints. After a failure an endpoint is not refilled: the sweeper hints it when due.
 */
export interface AttemptEngine extends Worker {
  /** Reserves up to `max` free slots for a claim about to run; returns how many. */
  reserve(max: number): number;
  /** Starts attempts for deliveries claimed with `reserved` slots; the slots not used are freed. */
  start(claimed: ClaimedDelivery[], reserved: number): void;
  /** Endpoints with due deliveries this replica could not claim for lack of slots or room. */
  want(endpointIds: Iterable<string>): void;
  /** Resolves once a slot has been freed (or the engine stops). */
  slotFreed(): Promise<void>;
  stopping(): boolean;
}

export function startAttemptEngine(opts: {
  sql: Sql;
  log: Logger;
  registry: Registry;
  agent: Dispatcher;
  settings: AttemptSettings;
}): AttemptEngine {
  const { sql, log, agent, settings } = opts;
  const attemptsTotal = new Counter({
    name: 'webhook_attempts_total',
    help: 'Webhook delivery attempts, by verdict',
    labelNames: ['verdict'],
    registers: [opts.registry],
  });
  const claimOpts = {
    replicaId: settings.replicaId,
    leaseMs: settings.leaseMs,
    endpointConcurrency: settings.endpointConcurrency,
  };
  const secrets = new Map<string, string>();
  let busy = 0; // slots reserved, attempting, or waiting for their outcome to be recorded
  let stopping = false;
  const wanting = new Set<string>();
  const attempts = new Set<Promise<void>>();
  /** Recording batches running (the batcher's own count still holds one that is finishing). */
  let recording = 0;
  let freedWaiters: (() => void)[] = [];

  const free = () => Math.max(0, settings.concurrency - busy);
  /** Wakes whoever waits for a slot, and the recorder (free slots may refill wanted endpoints). */
  const notify = () => {
    if (free() > 0 || stopping) {
      const waiters = freedWaiters;
      freedWaiters = [];
      for (const w of waiters) w();
    }
    refillIdle();
  };

  const secret = (d: ClaimedDelivery, encrypted: string): string => {
    // The endpoint is part of the entry: a value opens only for the endpoint it is bound to, never from the cache.
    const cached = `${d.endpoint_id}:${d.merchant_id}:${encrypted}`;
    let plain = secrets.get(cached);
    if (plain === undefined) {
      if (secrets.size >= SECRET_CACHE_SIZE) secrets.clear();
      const place = secretPlace('webhook-secret', d.endpoint_id, d.merchant_id);
      plain = decryptSecretWithAny(settings.secretKeys, encrypted, place).plaintext;
      secrets.set(cached, plain);
    }
    return plain;
  };
  /** Endpoints whose secret did not decrypt, logged once each (until one of their attempts is signed again). */
  const unsignable = new Set<string>();

  /**
   * The request's headers, or null when the endpoint's secret cannot be decrypted (or, decrypted, is not a webhook
   * secret): logged once per endpoint, not once per attempt.
   */
  const sign = (d: ClaimedDelivery): Record<string, string> | null => {
    try {
      const headers = webhookHeaders(
        signingSecrets((stored) => secret(d, stored), d),
        d.message_id,
        Math.floor(Date.now() / 1000),
        d.body,
      );
      unsignable.delete(d.endpoint_id);
      return headers;
    } catch (err) {
      if (!unsignable.has(d.endpoint_id)) {
        unsignable.add(d.endpoint_id);
        log.error(
          'webhook endpoint secret cannot be used to sign; its attempts fail until the key is listed or the secret rotated',
          {
            endpoint_id: d.endpoint_id,
            merchant_id: d.merchant_id,
            reason: err instanceof UndecryptableSecret ? 'undecryptable' : 'not a webhook secret',
          },
        );
      }
      return null;
    }
  };

  const attempt = async (d: ClaimedDelivery): Promise<void> => {
    const headers = sign(d);
    // Not signed, not sent: a failed attempt like a refused connection, recorded and retried by the table.
    const outcome = headers
      ? await postWebhook({
          dispatcher: agent,
          url: d.url,
          headers,
          body: d.body,
          timeoutMs: settings.attemptTimeoutMs,
          // With tracing on, in the trace its message was fanned out in (none when that trace was not sampled).
          trace: tracingEnabled()
            ? { parent: contextOfCarrier(d.trace_context), endpointId: d.endpoint_id, attempt: d.attempt_count + 1 }
            : undefined,
        })
      : unsignedOutcome();
    const verdict = judgeAttempt(outcome, d.attempt_count + 1, WEBHOOK_MAX_ATTEMPTS, (n, retryAfter) =>
      nextAttemptDelayMs(n, settings.backoffScale, retryAfter),
    );
    recorder.add({
      delivery: { id: d.id, endpoint_id: d.endpoint_id },
      outcome,
      verdict,
      attemptsMade: d.attempt_count + 1,
    });
  };

  /** What a batch did to each endpoint, in the order the attempts finished. */
  const tally = (batch: AttemptRecord[]): EndpointTally[] => {
    const by = new Map<string, EndpointTally>();
    for (const r of batch) {
      let t = by.get(r.delivery.endpoint_id);
      if (!t)
        by.set(
          r.delivery.endpoint_id,
          (t = { endpointId: r.delivery.endpoint_id, succeeded: false, failures: 0, gone: false }),
        );
      if (r.verdict.kind === 'succeeded') {
        t.succeeded = true;
        t.failures = 0;
      } else {
        t.failures++;
        if (r.verdict.kind === 'gone') t.gone = true;
      }
    }
    return [...by.values()];
  };

  /** Records `batch` and refills the slots it frees (plus `extra` reserved free ones); returns the new claims. */
  const recordAndRefill = async (
    batch: AttemptRecord[],
    extra: number,
    refilling = true,
  ): Promise<ClaimedDelivery[]> => {
    const tallies = tally(batch);
    // Healthy endpoints go on with their next due deliveries; a failing one waits for the sweeper (its backoff).
    const refill = new Set(wanting);
    for (const t of tallies) {
      if (t.succeeded && t.failures === 0 && !t.gone) refill.add(t.endpointId);
      else refill.delete(t.endpointId);
    }
    const limit = stopping || !refilling ? 0 : batch.length + extra;
    const endpoints = [...new Set([...tallies.map((t) => t.endpointId), ...refill])];
    // Every statement is known up front: one round trip.
    const { claimed } = await inOneTrip(sql, (tx) => ({
      relaxed: relaxCommit(tx),
      locked: lockEndpoints(tx, endpoints),
      recorded: recordAttempts(tx, batch, settings.replicaId),
      settled: settleEndpoints(tx, tallies),
      deadLettered: deadLetterWaiting(
        tx,
        tallies.filter((t) => t.gone).map((t) => t.endpointId),
      ),
      claimed: claimDue(tx, { ...claimOpts, endpointIds: [...refill], limit }),
    }));
    // Below the limit, every refilled endpoint got all it had room and work for: nothing more is wanted of it.
    if (claimed.length < limit) for (const id of refill) wanting.delete(id);
    for (const t of tallies) if (!(t.succeeded && t.failures === 0 && !t.gone)) wanting.delete(t.endpointId);
    return claimed;
  };

  /** Records a batch of outcomes (null: none, a refill alone) and starts the attempts its refill claimed. */
  const flush = async (items: (AttemptRecord | null)[]): Promise<void> => {
    const batch = items.filter((item) => item !== null);
    // Free slots for the refill beyond the batch's own, at most what the endpoints to refill could take: the rest
    // stay free for the fan-out and the hints meanwhile.
    const endpoints = new Set([...wanting, ...batch.map((r) => r.delivery.endpoint_id)]);
    const extra = stopping
      ? 0
      : Math.min(free(), Math.max(0, endpoints.size * settings.endpointConcurrency - batch.length));
    busy += extra;
    let claimed: ClaimedDelivery[] = [];
    let recorded = batch;
    try {
      claimed = await recordAndRefill(batch, extra);
    } catch (err) {
      // One bad record (its endpoint deleted meanwhile, say) must not lose the others: record them one by one.
      recorded = [];
      for (const r of batch.length > 1 ? batch : []) {
        try {
          await recordAndRefill([r], 0, false);
          recorded.push(r);
        } catch {
          // logged below
        }
      }
      if (recorded.length < batch.length) {
        // Recording failed (database down): the leases run out and the sweeper hints the deliveries again.
        log.error('webhook attempts could not be recorded', { count: batch.length - recorded.length, err });
      }
    }
    for (const r of recorded) {
      attemptsTotal.inc({ verdict: r.verdict.kind });
      log.debug('webhook attempt', {
        delivery_id: r.delivery.id,
        endpoint_id: r.delivery.endpoint_id,
        attempt: r.attemptsMade,
        status_code: r.outcome.statusCode,
        error: r.outcome.error,
        verdict: r.verdict.kind,
        duration_ms: r.outcome.durationMs,
      });
    }
    busy -= batch.length + extra; // every slot of the batch is free now, recorded or not
    run(claimed);
  };

  const run = (claimed: ClaimedDelivery[]) => {
    busy += claimed.length;
    for (const d of claimed) {
      const work: Promise<void> = attempt(d).finally(() => attempts.delete(work));
      attempts.add(work);
    }
    notify();
  };

  const recorder = createBatcher<AttemptRecord | null>(
    RECORDING,
    async (items) => {
      recording++;
      try {
        await flush(items);
      } finally {
        recording--;
        refillIdle();
      }
    },
    (err) => log.error('webhook recorder failed', { err }),
  );

  /**
   * With nothing to record and no recording under way, free slots still go to the endpoints that want them: a batch
   * of no outcomes (null), a refill alone. A recording under way refills them when it ends.
   */
  function refillIdle(): void {
    if (recording === 0 && recorder.waiting === 0 && wanting.size > 0 && free() > 0 && !stopping) recorder.add(null);
  }

  return {
    reserve(max) {
      const n = stopping ? 0 : Math.min(max, free());
      busy += n;
      return n;
    },
    start(claimed, reserved) {
      busy -= reserved;
      run(claimed);
    },
    want(endpointIds) {
      for (const id of endpointIds) wanting.add(id);
      refillIdle();
    },
    slotFreed() {
      if (stopping || free() > 0) return Promise.resolve();
      return new Promise((resolve) => freedWaiters.push(resolve));
    },
    stopping: () => stopping,
    async stop() {
      stopping = true;
      notify();
      // In-flight attempts finish and are recorded (their leases released); nothing new is claimed.
      while (attempts.size > 0 || recorder.waiting > 0 || recorder.inProgress > 0)
        await Promise.all([...attempts, recorder.oneEnded()]);
      await recorder.stop();
    },
  };
}
