import { jetstream, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Counter, type Registry } from 'prom-client';
import { DISPATCHER_ATTEMPTS_CONSUMER, streamName, type WebhookAttemptHint } from '@platform/shared/catalogue';
import type { Sql } from '@platform/shared/db';
import { isId } from '@platform/shared/ids';
import type { Logger } from '@platform/shared/log';
import { decodeJson, ensureDurableConsumer } from '@platform/shared/nats';
import type { Worker } from '@platform/shared/service';
import { nextAttemptDelayMs, WEBHOOK_MAX_ATTEMPTS, webhookHeaders } from '@platform/shared/webhooks';
import type { Dispatcher } from 'undici';
import { signingSecrets } from './endpoints.ts';
import { claimDelivery, judgeAttempt, recordAttempt, type ClaimedDelivery, type ClaimResult } from './queries/deliveries.ts';
import { postWebhook } from './send.ts';
import { consumeConcurrently } from '@platform/shared/consume';

export interface AttemptSettings {
  replicaId: string;
  masterKey: Buffer;
  backoffScale: number;
  attemptTimeoutMs: number;
  leaseMs: number;
  concurrency: number;
  endpointConcurrency: number;
}

/**
 * Works the hint stream: claim the named delivery (lease in Postgres), ack the hint, attempt, record. After a
 * success the same slot goes on with the endpoint's next due delivery, so a healthy endpoint's backlog drains at its
 * concurrency without waiting for hints; after a failure it stops, and the sweeper hints the rest when due.
 */
export async function startAttemptWorker(opts: {
  sql: Sql;
  nc: NatsConnection;
  prefix: string;
  log: Logger;
  registry: Registry;
  agent: Dispatcher;
  settings: AttemptSettings;
}): Promise<Worker> {
  const { sql, nc, prefix, log, agent, settings } = opts;
  await ensureDurableConsumer(nc, prefix, DISPATCHER_ATTEMPTS_CONSUMER);
  const consumer = await jetstream(nc).consumers.get(streamName(prefix, 'WEBHOOK_ATTEMPTS'), DISPATCHER_ATTEMPTS_CONSUMER.durable_name);
  const messages = await consumer.consume({ max_messages: Math.max(settings.concurrency, 10) });
  const attemptsTotal = new Counter({
    name: 'webhook_attempts_total',
    help: 'Webhook delivery attempts, by verdict',
    labelNames: ['verdict'],
    registers: [opts.registry],
  });
  const claimOpts = { replicaId: settings.replicaId, leaseMs: settings.leaseMs, endpointConcurrency: settings.endpointConcurrency };

  const attempt = async (d: ClaimedDelivery): Promise<boolean> => {
    const secrets = signingSecrets(settings.masterKey, d);
    const headers = webhookHeaders(secrets, d.message_id, Math.floor(Date.now() / 1000), d.body);
    const outcome = await postWebhook({ dispatcher: agent, url: d.url, headers, body: d.body, timeoutMs: settings.attemptTimeoutMs });
    const attemptsMade = d.attempt_count + 1;
    const verdict = judgeAttempt(outcome, attemptsMade, WEBHOOK_MAX_ATTEMPTS, (n, retryAfter) =>
      nextAttemptDelayMs(n, settings.backoffScale, retryAfter),
    );
    const { endpointDisabled } = await recordAttempt(sql, d, outcome, verdict, settings.replicaId);
    attemptsTotal.inc({ verdict: verdict.kind });
    log.debug('webhook attempt', {
      delivery_id: d.id,
      endpoint_id: d.endpoint_id,
      attempt: attemptsMade,
      status_code: outcome.statusCode,
      error: outcome.error,
      verdict: verdict.kind,
      duration_ms: outcome.durationMs,
    });
    return verdict.kind === 'succeeded' && !endpointDisabled;
  };

  const run = async (first: ClaimedDelivery, stopping: () => boolean) => {
    let current: ClaimedDelivery | null = first;
    while (current) {
      const healthy = await attempt(current);
      if (!healthy || stopping()) return;
      const next: ClaimResult = await claimDelivery(sql, { endpointId: current.endpoint_id }, claimOpts);
      current = next.kind === 'claimed' ? next.delivery : null;
    }
  };

  const handle = async (m: JsMsg, stopping: () => boolean) => {
    if (stopping()) {
      m.nak(); // buffered when we stopped: another replica (or this one restarted) takes it now
      return;
    }
    let hint: WebhookAttemptHint;
    try {
      hint = decodeJson<WebhookAttemptHint>(m.data);
    } catch {
      m.term();
      return;
    }
    if (!isId('dlv', hint?.delivery_id)) {
      m.term();
      return;
    }
    let claim: ClaimResult;
    try {
      claim = await claimDelivery(sql, { deliveryId: hint.delivery_id }, claimOpts);
    } catch (err) {
      log.warn('could not claim a delivery; the hint will come again', { delivery_id: hint.delivery_id, err: (err as Error).message });
      m.nak(1000);
      return;
    }
    // The lease now protects the delivery; holding the message during the HTTP call would only count it against
    // max_ack_pending for every endpoint (nats-server#6093).
    m.ack();
    if (claim.kind !== 'claimed') return;
    try {
      await run(claim.delivery, stopping);
    } catch (err) {
      // Recording failed (database down): the lease runs out and the sweeper hints the delivery again.
      log.error('webhook attempt could not be recorded', { delivery_id: claim.delivery.id, err: (err as Error).message });
    }
  };

  return consumeConcurrently(messages, { concurrency: settings.concurrency, log, name: 'webhook attempts', handle });
}
