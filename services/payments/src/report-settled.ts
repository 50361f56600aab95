import type { NatsConnection } from '@nats-io/transport-node';
import { PLATFORM_PAYOUT_SUBJECTS, RPC_OUTCOME_HEADER } from '@platform/shared/catalogue';
import { newId } from '@platform/shared/ids';
import type { Logger } from '@platform/shared/log';
import { encodeJson } from '@platform/shared/nats';
import type { PayoutSettledRequest } from '@platform/shared/payments/rpc';
import type { Worker } from '@platform/shared/service';
import type { PaymentsDeps } from './deps.ts';
import { markReported, unreportedPayouts } from './queries/affiliate-payouts.ts';

const BATCH = 50;
const ANSWER_MS = 5000;

/**
 * Tells the commissions service how the ledger payouts of its affiliate payouts ended (paid, or failed and returned
 * to the merchant's account), every `intervalMs`, until it answers `ok`: a report lost with the commissions service
 * down is sent again on the next pass, and the commissions service applies one twice as once.
 */
export function startSettlementReporter(
  deps: PaymentsDeps,
  nc: NatsConnection,
  prefix: string,
  log: Logger,
  intervalMs: number,
): Worker {
  let running: Promise<void> = Promise.resolve();
  const pass = async () => {
    try {
      for (const payout of await unreportedPayouts(deps.sql, BATCH)) {
        // Test-mode funds never pay an affiliate payout: one drawn on a test account (possible only before payouts
        // drew on live accounts alone) is reported failed whatever the sandbox rail did, so that its commissions are
        // approved again instead of marked paid.
        const testMoney = !payout.livemode;
        const report: PayoutSettledRequest = {
          request_id: newId('req'),
          deadline: Date.now() + ANSWER_MS,
          merchant_id: payout.merchant_id,
          payout_id: payout.affiliate_payout_id,
          ledger_payout_id: payout.id,
          status: testMoney ? 'failed' : (payout.status as 'paid' | 'failed'),
          failure_reason: testMoney ? 'test_mode_funds' : payout.failure_code,
        };
        const answer = await nc
          .request(PLATFORM_PAYOUT_SUBJECTS.settled(prefix), encodeJson(report), {
            timeout: ANSWER_MS,
          })
          .catch(() => null);
        if (answer?.headers?.get(RPC_OUTCOME_HEADER) === 'ok') await markReported(deps.sql, payout.id, payout.status);
        else
          log.warn('payout outcome not acknowledged yet; reported again on the next pass', {
            ledger_payout_id: payout.id,
          });
      }
    } catch (err) {
      log.warn('reporting payout outcomes failed; the next pass retries', { err });
    }
  };
  const timer = setInterval(() => {
    running = running.then(pass);
  }, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
