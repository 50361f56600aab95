import { encryptionKey } from '@platform/shared/config';
import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { startService, type ServiceRuntime } from '@platform/shared/service';
import type { PaymentsConfig } from './config.ts';
import type { PaymentsDeps } from './deps.ts';
import { startClock } from './clock.ts';
import { affiliatePayoutRoute } from './operations/affiliate-payout.ts';
import { cancelPaymentIntentOperation } from './operations/cancel-payment-intent.ts';
import { capturePaymentIntentOperation } from './operations/capture-payment-intent.ts';
import { confirmPaymentIntentOperation } from './operations/confirm-payment-intent.ts';
import { createAccountLinkOperation } from './operations/create-account-link.ts';
import { createAccountOperation } from './operations/create-account.ts';
import { createPaymentIntentOperation } from './operations/create-payment-intent.ts';
import { createPayoutOperation } from './operations/create-payout.ts';
import { listAccountsOperation } from './operations/list-accounts.ts';
import { listPaymentIntentsOperation } from './operations/list-payment-intents.ts';
import { listPayoutsOperation } from './operations/list-payouts.ts';
import { listTransactionsOperations } from './operations/list-transactions.ts';
import { openOnboarding } from './operations/open-onboarding.ts';
import { retrieveAccountOperation } from './operations/retrieve-account.ts';
import { retrieveBalanceOperation } from './operations/retrieve-balance.ts';
import { retrievePaymentIntentOperation } from './operations/retrieve-payment-intent.ts';
import { retrievePayoutOperation } from './operations/retrieve-payout.ts';
import { submitOnboarding } from './operations/submit-onboarding.ts';
import { startSettlementReporter } from './report-settled.ts';
import { sandboxProcessor, type PaymentProcessor } from './processor.ts';
import { startLedgerReconciler } from './reconcile-ledger.ts';
import { startProcessingReconciler } from './reconcile-processing.ts';
import { servePayments } from './serve.ts';

/**
 * The platform payment API's service: connected accounts and their onboarding, payment intents, the ledger with its
 * balance transactions, and payouts. It answers the gateway over NATS (serve.ts); its clock makes pending funds
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
      return Promise.resolve([
        servePayments({
          nc: runtime.nc,
          prefix: config.NATS_PREFIX,
          deps,
          operations: [
            createAccountOperation,
            retrieveAccountOperation,
            listAccountsOperation,
            createAccountLinkOperation,
            createPaymentIntentOperation,
            retrievePaymentIntentOperation,
            listPaymentIntentsOperation,
            confirmPaymentIntentOperation,
            capturePaymentIntentOperation,
            cancelPaymentIntentOperation,
            ...listTransactionsOperations,
            retrieveBalanceOperation,
            createPayoutOperation,
            retrievePayoutOperation,
            listPayoutsOperation,
          ],
          routes: [openOnboarding(deps), submitOnboarding(deps), affiliatePayoutRoute(deps)],
          log: runtime.log,
          registry: runtime.registry,
        }),
        startClock(deps, runtime.log, config.PAYMENTS_CLOCK_INTERVAL_MS),
        startSettlementReporter(deps, runtime.nc, config.NATS_PREFIX, runtime.log, config.PAYMENTS_CLOCK_INTERVAL_MS),
        startProcessingReconciler(deps, runtime.log, config.PAYMENT_PROCESSING_RECOVER_AFTER_MS),
        startLedgerReconciler(deps, runtime.log, runtime.registry, config.LEDGER_RECONCILE_INTERVAL_MS),
      ]);
    },
  });
}
