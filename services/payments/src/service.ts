import { encryptionKey } from '@platform/shared/config';
import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { startService, type ServiceRuntime } from '@platform/shared/service';
import type { PaymentsConfig } from './config.ts';
import type { PaymentsDeps } from './deps.ts';
import { startClock } from './clock.ts';
import { affiliatePayoutHandler } from './operations/affiliate-payouts.ts';
import { startSettlementReporter } from './report-settled.ts';
import { createAccountLinkOperation, openOnboarding, submitOnboarding } from './operations/account-links.ts';
import { createAccountOperation, listAccountsOperation, retrieveAccountOperation } from './operations/accounts.ts';
import { listTransactionsOperations, retrieveBalanceOperation } from './operations/balance.ts';
import {
  cancelPaymentIntentOperation,
  capturePaymentIntentOperation,
  confirmPaymentIntentOperation,
  createPaymentIntentOperation,
  listPaymentIntentsOperation,
  retrievePaymentIntentOperation,
} from './operations/payment-intents.ts';
import { createPayoutOperation, listPayoutsOperation, retrievePayoutOperation } from './operations/payouts.ts';
import { sandboxProcessor, type PaymentProcessor } from './processor.ts';
import { startLedgerReconciler } from './reconcile-ledger.ts';
import { startProcessingReconciler } from './reconcile-processing.ts';
import { servePayments, type Handler } from './rpc.ts';

/**
 * The platform payment API's service: connected accounts and their onboarding, payment intents, the ledger with its
 * balance transactions, and payouts. It answers the gateway over NATS (rpc.ts); its clock makes pending funds
 * available and moves payouts along the sandbox rail.
 */
export async function startPaymentsService(
  config: PaymentsConfig,
  log?: Logger,
  /** The processor on the service's pool: the sandbox unless a real one is given. */
  processor: (sql: Sql) => PaymentProcessor = sandboxProcessor,
): Promise<ServiceRuntime> {
  return startService({
    name: 'payments',
    config,
    outboxRelay: false,
    operations: [],
    log,
    workers: (runtime) => {
      const deps: PaymentsDeps = {
        sql: runtime.sql,
        publicBaseUrl: config.PUBLIC_BASE_URL,
        encryptionKey: encryptionKey(config),
        processor: processor(runtime.sql),
        availabilityDelaySeconds: config.PAYMENTS_AVAILABILITY_DELAY_S,
        payoutRailStepMs: config.PAYOUT_RAIL_STEP_MS,
        accountLinkTtlSeconds: config.ACCOUNT_LINK_TTL_S,
      };
      const handlers = [
        createAccountOperation(deps),
        retrieveAccountOperation(deps),
        listAccountsOperation(deps),
        createAccountLinkOperation(deps),
        openOnboarding(deps),
        submitOnboarding(deps),
        createPaymentIntentOperation(deps),
        retrievePaymentIntentOperation(deps),
        listPaymentIntentsOperation(deps),
        confirmPaymentIntentOperation(deps),
        capturePaymentIntentOperation(deps),
        cancelPaymentIntentOperation(deps),
        ...listTransactionsOperations(deps),
        retrieveBalanceOperation(deps),
        createPayoutOperation(deps),
        retrievePayoutOperation(deps),
        listPayoutsOperation(deps),
        affiliatePayoutHandler(deps),
      ] as Handler<{ request_id: string; deadline: number }>[];
      return Promise.resolve([
        servePayments({
          nc: runtime.nc,
          prefix: config.NATS_PREFIX,
          handlers,
          log: runtime.log,
          registry: runtime.registry,
          sql: runtime.sql,
          encryptionKey: deps.encryptionKey,
        }),
        startClock(deps, runtime.log, config.PAYMENTS_CLOCK_INTERVAL_MS),
        startSettlementReporter(deps, runtime.nc, config.NATS_PREFIX, runtime.log, config.PAYMENTS_CLOCK_INTERVAL_MS),
        startProcessingReconciler(deps, runtime.log, config.PAYMENT_PROCESSING_RECOVER_AFTER_MS),
        startLedgerReconciler(deps, runtime.log, runtime.registry, config.LEDGER_RECONCILE_INTERVAL_MS),
      ]);
    },
  });
}
