import type { Queryable } from '@platform/shared/db';
import { newId } from '@platform/shared/ids';
import type { Logger } from '@platform/shared/log';
import type { Worker } from '@platform/shared/service';
import type { PaymentsDeps } from './deps.ts';
import { availabilityMovement, payoutFailureMovement, transferMovement } from './domain/ledger-rules.ts';
import { postMovement, postMovements } from './queries/ledger.ts';
import { claimDuePayouts, movePayout, type PayoutRow } from './queries/payouts.ts';
import { claimDueTransactions, markAvailable } from './queries/transactions.ts';

const BATCH = 100;

/**
 * The sandbox payout rail's verdict on a bank account, by Stripe's test account numbers: …1116 has no account, …1113
 * is closed; any other is paid.
 */
export function railOutcome(last4: string | null): { code: string; message: string } | null {
  if (last4 === '1116')
    return { code: 'no_account', message: 'The bank account details on file are probably incorrect.' };
  if (last4 === '1113') return { code: 'account_closed', message: 'The bank account has been closed.' };
  return null;
}

/**
 * The payments service's clock, every PAYMENTS_CLOCK_INTERVAL_MS: pending funds that came due become available (one
 * ledger movement each), and the sandbox rail moves each payout a step once its current step has lasted
 * PAYOUT_RAIL_STEP_MS (pending → in_transit → paid, or failed with its amount back in the balance). Rows are claimed
 * with SKIP LOCKED, so replicas share the work; each change is one transaction.
 */
export function startClock(deps: PaymentsDeps, log: Logger, intervalMs: number): Worker {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();

  const makeAvailable = async (): Promise<number> =>
    deps.sql.begin(async (tx) => {
      const due = await claimDueTransactions(tx, BATCH);
      for (const t of due) {
        const net = Number(t.net);
        if (net > 0) await postMovement(tx, t.livemode, t.id, availabilityMovement(t.holder, net, t.currency));
        await markAvailable(tx, t.id);
      }
      return due.length;
    });

  /** One step of a payout, in the transaction that claimed it: a crash leaves it claimable again. */
  const advance = async (tx: Queryable, payout: PayoutRow) => {
    if (payout.status === 'pending') return void (await movePayout(tx, payout.id, 'in_transit'));
    const failure = railOutcome(payout.destination_last4);
    if (!failure) return void (await movePayout(tx, payout.id, 'paid'));
    const amount = Number(payout.amount);
    const transactionId = newId('txn');
    const returned = {
      movement: payoutFailureMovement(payout.holder, amount, payout.currency),
      shown: {
        id: transactionId,
        holder: payout.holder,
        type: 'payout_failure' as const,
        amount,
        fee: 0,
        status: 'available' as const,
        available_on: new Date(),
        description: `Payout failed: ${failure.code}`,
      },
    };
    // An affiliate payout's amount goes back where it came from: the merchant's connected account. Both movements
    // posted together lock the affiliate's and the account's balances in one order, as the affiliate payout that
    // moves money the other way does (postMovements), instead of the affiliate's first: no deadlock between them.
    const back = payout.funded_by
      ? [
          {
            movement: transferMovement(payout.holder, payout.funded_by, amount, payout.currency),
            shown: {
              id: newId('txn'),
              holder: payout.funded_by,
              type: 'transfer' as const,
              amount,
              fee: 0,
              status: 'available' as const,
              available_on: new Date(),
              description: `Returned: payout ${payout.id} failed (${failure.code})`,
            },
          },
        ]
      : [];
    await postMovements(tx, payout.livemode, payout.id, [returned, ...back]);
    await movePayout(tx, payout.id, 'failed', { ...failure, balance_transaction: transactionId });
  };

  const movePayouts = async (): Promise<number> =>
    deps.sql.begin(async (tx) => {
      const due = await claimDuePayouts(tx, deps.payoutRailStepMs, BATCH);
      for (const payout of due) await advance(tx, payout);
      return due.length;
    });

  const tick = async () => {
    try {
      while (!stopped && (await makeAvailable()) === BATCH);
      while (!stopped && (await movePayouts()) === BATCH);
    } catch (err) {
      log.warn('payments clock pass failed; the next pass retries', { err });
    }
  };
  const timer = setInterval(() => {
    running = running.then(tick);
  }, intervalMs);

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
