import { COMMISSIONS_CONSUMER } from '@platform/shared/catalogue';
import { decryptionKeys, encryptionKey } from '@platform/shared/config';
import { createHmacKey } from '@platform/shared/crypto';
import type { Logger } from '@platform/shared/log';
import { startService, type ServiceRuntime } from '@platform/shared/service';
import type { CommissionsConfig } from './config.ts';
import type { Clock, CommissionsDeps } from './deps.ts';
import { approveEndedHolds } from './hold.ts';
import { runPayoutSchedule } from './payout-run.ts';
import { processConversions } from './process.ts';
import { reconcileConversions } from './reconcile.ts';
import { createPayoutsOperation } from './operations/create-payouts.ts';
import { exportPayoutsOperation } from './operations/export-payouts.ts';
import { getPayoutOperation } from './operations/get-payout.ts';
import { getCommissionOperation } from './operations/get.ts';
import { listPayoutCommissionsOperation } from './operations/list-payout-commissions.ts';
import { listPayoutExportsOperation } from './operations/list-payout-exports.ts';
import { listPayoutsOperation } from './operations/list-payouts.ts';
import { listCommissionsOperation } from './operations/list.ts';
import { updatePayoutOperation } from './operations/update-payout.ts';
import { updateCommissionOperation } from './operations/update.ts';
import { recheckSendingPayouts } from './platform-payouts.ts';
import { serveSettledReports } from './platform-settled.ts';
import { countedProcessing, payoutMetrics } from './metrics.ts';
import { startConversionConsumer, startIntervalWorker } from './workers.ts';

/**
 * A recreated consumer starts this much further back than the reconcile horizon: the reconciler takes what is
 * older than the horizon, and the margin covers a pass that has yet to run.
 */
const RESUME_MARGIN_MS = 15_000;

/** How often a replica looks for platform payouts left sending (platform-payouts.ts says for how long). */
const SENDING_RECHECK_INTERVAL_MS = 15_000;

export interface CommissionsService extends ServiceRuntime {
  /** Runs one hold-period pass now (waiting for one in progress); resolves with how many commissions it approved. */
  approveEndedHolds(): Promise<number>;
  /** Runs one pass of the monthly payout schedule now; resolves with how many payouts it created. */
  runPayoutSchedule(): Promise<number>;
  /** Runs one pass over the platform payouts left sending now; resolves with how many it settled. */
  recheckSendingPayouts(): Promise<number>;
}

/**
 * The commissions service: the REST operations on commissions, the consumer of `conversion.recorded` (commissions,
 * fraud flags, revenue and tiers), its reconciler (conversions the stream lost) and the hold-period scheduler.
 * `opts.now` replaces the clock (tests).
 */
export async function startCommissionsService(
  config: CommissionsConfig,
  log?: Logger,
  opts: { now?: Clock } = {},
): Promise<CommissionsService> {
  const deps: CommissionsDeps = {
    publicBaseUrl: config.PUBLIC_BASE_URL,
    cursorKey: createHmacKey(encryptionKey(config), 'cursor'),
    now: opts.now ?? (() => new Date()),
    vaultKeys: decryptionKeys(config),
  };
  let holdScheduler: ReturnType<typeof startIntervalWorker> | undefined;
  let payoutScheduler: ReturnType<typeof startIntervalWorker> | undefined;
  let sendingRecheck: ReturnType<typeof startIntervalWorker> | undefined;
  const runtime = await startService({
    name: 'commissions',
    config,
    outboxRelay: config.OUTBOX_RELAY && config,
    operations: [
      listCommissionsOperation(deps),
      getCommissionOperation(),
      updateCommissionOperation(deps),
      createPayoutsOperation(deps),
      listPayoutsOperation(deps),
      exportPayoutsOperation(deps),
      listPayoutExportsOperation(deps),
      getPayoutOperation(),
      listPayoutCommissionsOperation(deps),
      updatePayoutOperation(deps),
    ],
    log,
    consumers: [
      { entry: COMMISSIONS_CONSUMER, resumeWindowMs: config.CONVERSION_RECONCILE_AFTER_MS + RESUME_MARGIN_MS },
    ],
    workers: ({ sql, nc, topology, log: workerLog, registry }) => {
      const process = countedProcessing(registry, (envelopes) =>
        processConversions(sql, envelopes, { now: deps.now, publicBaseUrl: deps.publicBaseUrl }),
      );
      const consumer = startConversionConsumer({
        nc,
        prefix: config.NATS_PREFIX,
        topology,
        log: workerLog,
        concurrency: config.CONVERSION_CONCURRENCY,
        maxBatch: config.CONVERSION_BATCH_MAX,
        batchIntervalMs: config.CONVERSION_BATCH_INTERVAL_MS,
        process: process.stream,
      });
      const settleMs = config.CONVERSION_RECONCILE_AFTER_MS;
      const reconciler = startIntervalWorker({
        name: 'conversion reconcile',
        intervalMs: Math.min(Math.max(settleMs / 2, 100), 10_000),
        log: workerLog,
        pass: async () => {
          const processed = await reconcileConversions(sql, { settleMs, log: workerLog, process: process.reconciler });
          if (processed > 0)
            workerLog.warn('conversions missing from the stream processed from the outbox', { count: processed });
          return processed;
        },
      });
      holdScheduler = startIntervalWorker({
        name: 'hold period',
        intervalMs: config.HOLD_SCHEDULER_INTERVAL_MS,
        log: workerLog,
        pass: () => approveEndedHolds(sql, deps.now),
      });
      payoutScheduler = startIntervalWorker({
        name: 'payout schedule',
        intervalMs: config.PAYOUT_SCHEDULER_INTERVAL_MS,
        log: workerLog,
        pass: () => runPayoutSchedule(sql, deps.now, workerLog),
      });
      deps.nats = { nc, prefix: config.NATS_PREFIX };
      deps.payoutMetrics = payoutMetrics(registry);
      const settledReports = serveSettledReports({
        sql,
        nc,
        prefix: config.NATS_PREFIX,
        deps,
        log: workerLog,
        registry,
      });
      const sender = { sql, nc, prefix: config.NATS_PREFIX, deps, log: workerLog };
      sendingRecheck = startIntervalWorker({
        name: 'platform payouts left sending',
        intervalMs: SENDING_RECHECK_INTERVAL_MS,
        log: workerLog,
        pass: () => recheckSendingPayouts(sender),
      });
      return [consumer, reconciler, holdScheduler, payoutScheduler, settledReports, sendingRecheck];
    },
  });
  return Object.assign(runtime, {
    approveEndedHolds: () => holdScheduler!.runNow(),
    runPayoutSchedule: () => payoutScheduler!.runNow(),
    recheckSendingPayouts: () => sendingRecheck!.runNow(),
  });
}
