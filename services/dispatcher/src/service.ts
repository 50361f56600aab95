import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { DISPATCHER_ATTEMPTS_CONSUMER, DISPATCHER_FANOUT_CONSUMER } from '@platform/shared/catalogue';
import { decryptionKeys, encryptionKey } from '@platform/shared/config';
import { createHmacKey } from '@platform/shared/crypto';
import type { Logger } from '@platform/shared/log';
import { startPartitionMaintenance } from '@platform/shared/partitions';
import { startService, type ServiceRuntime } from '@platform/shared/service';
import { startAttemptEngine } from './attempts.ts';
import { DEVELOPMENT_MAIL_FROM, type DispatcherConfig } from './config.ts';
import type { DispatcherDeps } from './deps.ts';
import { startFanOut } from './fanout.ts';
import { registerDeliveryGauges } from './gauges.ts';
import { claimNamed, startHintConsumer } from './hint-consumer.ts';
import { webhookAttemptPartitions } from './queries/attempts.ts';
import type { ClaimedDelivery } from './queries/claims.ts';
import type { NewDelivery } from './queries/fan-out.ts';
import { HintPublisher } from './hints.ts';
import { createEndpointOperation } from './operations/create-endpoint.ts';
import { deleteEndpointOperation } from './operations/delete-endpoint.ts';
import { getEndpointOperation } from './operations/get-endpoint.ts';
import { listDeliveriesOperation } from './operations/list-deliveries.ts';
import { listEndpointsOperation } from './operations/list-endpoints.ts';
import { replayDeliveryOperation } from './operations/replay-delivery.ts';
import { replayRangeOperation } from './operations/replay-range.ts';
import { rotateSecretOperation } from './operations/rotate-secret.ts';
import { sendTestOperation } from './operations/send-test.ts';
import { updateEndpointOperation } from './operations/update-endpoint.ts';
import { createAddressPolicy } from './domain/addresses.ts';
import { createGuardedAgent } from './ssrf.ts';
import { devMailboxSender, smtpSender, startMailer } from './mailer.ts';
import { startSweeper } from './sweeper.ts';
import { ConfigError } from '@platform/shared/config';

/** How much further back than its horizon a recreated consumer starts: a reconcile pass may have yet to run. */
const RESUME_MARGIN_MS = 15_000;

/** The URL guard of this configuration (also used by the operator CLI). */
export function addressPolicyOf(
  config: Pick<DispatcherConfig, 'APP_ENV' | 'WEBHOOK_ALLOW_HTTP' | 'WEBHOOK_ALLOWED_CIDRS'>,
) {
  try {
    return createAddressPolicy({
      appEnv: config.APP_ENV,
      allowHttp: config.WEBHOOK_ALLOW_HTTP,
      allowedCidrs: config.WEBHOOK_ALLOWED_CIDRS,
    });
  } catch (err) {
    throw new ConfigError('WEBHOOK_ALLOWED_CIDRS', (err as Error).message.replace(/^WEBHOOK_ALLOWED_CIDRS: /, ''), {
      cause: err,
    });
  }
}

/**
 * The dispatcher: webhook endpoint operations, the fan-out consumer, the attempt workers and the sweeper, in one
 * process. Startable in-process (tests, benches) or by main.ts; several replicas may run against one database.
 */
export async function startDispatcherService(config: DispatcherConfig, log?: Logger): Promise<ServiceRuntime> {
  const masterKey = encryptionKey(config);
  const policy = addressPolicyOf(config);
  const agent = createGuardedAgent(policy, { connectTimeoutMs: config.WEBHOOK_CONNECT_TIMEOUT_MS });
  const hints = new HintPublisher(config.NATS_PREFIX);
  const replicaId = config.DISPATCHER_ID ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const deps: DispatcherDeps = { masterKey, cursorKey: createHmacKey(masterKey, 'cursor'), policy, hints };

  const runtime = await startService({
    name: 'dispatcher',
    config,
    outboxRelay: false,
    operations: [
      createEndpointOperation(deps),
      listEndpointsOperation(deps),
      getEndpointOperation(),
      updateEndpointOperation(deps),
      deleteEndpointOperation(),
      rotateSecretOperation(deps),
      sendTestOperation(deps),
      listDeliveriesOperation(),
      replayDeliveryOperation(deps),
      replayRangeOperation(deps),
    ],
    log,
    consumers: [
      // Domain events older than the reconcile horizon are fanned out from the outbox; hints are a work queue.
      { entry: DISPATCHER_FANOUT_CONSUMER, resumeWindowMs: config.WEBHOOK_RECONCILE_AFTER_MS + RESUME_MARGIN_MS },
      { entry: DISPATCHER_ATTEMPTS_CONSUMER, resumeWindowMs: null },
    ],
    workers: ({ sql, nc, topology, log: serviceLog, registry }) => {
      hints.attach(nc, serviceLog, { sql, topology });
      const settings = {
        replicaId,
        secretKeys: decryptionKeys(config),
        backoffScale: config.WEBHOOK_BACKOFF_SCALE,
        attemptTimeoutMs: config.WEBHOOK_ATTEMPT_TIMEOUT_MS,
        // Longer than any attempt can take, plus time to record it: a live replica never loses its lease.
        leaseMs: config.WEBHOOK_ATTEMPT_TIMEOUT_MS + 10_000,
        concurrency: config.WEBHOOK_CONCURRENCY,
        endpointConcurrency: config.WEBHOOK_ENDPOINT_CONCURRENCY,
      };
      const claim = { replicaId, leaseMs: settings.leaseMs, endpointConcurrency: settings.endpointConcurrency };
      const engine = startAttemptEngine({ sql, log: serviceLog, registry, agent, settings });
      registerDeliveryGauges(registry, sql);
      const fanout = startFanOut({ sql, nc, prefix: config.NATS_PREFIX, topology, log: serviceLog, engine, claim });
      const hinted = startHintConsumer({
        sql,
        nc,
        prefix: config.NATS_PREFIX,
        topology,
        log: serviceLog,
        engine,
        concurrency: settings.concurrency,
        claim,
      });
      const attemptUnhinted = async (deliveries: NewDelivery[]) => {
        const reserved = engine.reserve(deliveries.length);
        let claimed: ClaimedDelivery[] = [];
        try {
          if (reserved > 0)
            claimed = await claimNamed(
              sql,
              claim,
              deliveries.map((d) => d.id),
              reserved,
            );
        } finally {
          engine.start(claimed, reserved);
        }
      };
      const sweeper = startSweeper({
        sql,
        log: serviceLog,
        hints,
        intervalMs: config.WEBHOOK_SWEEP_INTERVAL_MS,
        requeueAfterMs: config.WEBHOOK_REQUEUE_AFTER_MS,
        reconcileAfterMs: config.WEBHOOK_RECONCILE_AFTER_MS,
        endpointConcurrency: config.WEBHOOK_ENDPOINT_CONCURRENCY,
        retentionDays: config.WEBHOOK_RETENTION_DAYS,
        attemptUnhinted,
      });
      const partitions = startPartitionMaintenance({
        sql,
        log: serviceLog,
        tables: [{ spec: webhookAttemptPartitions, retentionDays: config.WEBHOOK_RETENTION_DAYS }],
      });
      const mailer = startMailer({
        sql,
        log: serviceLog,
        keys: decryptionKeys(config),
        sender: config.SMTP_URL
          ? smtpSender(config.SMTP_URL, config.MAIL_FROM ?? DEVELOPMENT_MAIL_FROM)
          : devMailboxSender(serviceLog),
        replicaId,
      });
      // Stopped in reverse: the sweeper, then the consumers, then the engine drains the attempts in flight.
      return [engine, fanout, hinted, sweeper, partitions, mailer];
    },
  });
  runtime.log.info('dispatcher replica', { replica_id: replicaId });
  return {
    ...runtime,
    async close() {
      await runtime.close();
      await agent.close();
    },
  };
}
