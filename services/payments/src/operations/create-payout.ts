import { newId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { invalidRequest } from '@platform/shared/payments/errors';
import { paymentsApi } from '@platform/shared/payments/operations';
import type { PaymentsContext } from '../context.ts';
import { payoutMovement } from '../domain/ledger-rules.ts';
import { presentPayout } from '../present.ts';
import { findAccount } from '../queries/accounts.ts';
import { isBalanceInsufficient, postMovement } from '../queries/ledger.ts';
import { insertPayout } from '../queries/payouts.ts';
import { accountStanding } from '../domain/requirements.ts';
import { stripeRefusals } from '../stripe-errors.ts';
import { checkCurrency, cleanMetadata } from './params.ts';

/**
 * A payout takes its amount from the available balance in the same transaction that records it: the balance's row
 * lock orders concurrent payouts, and one that would take the balance below zero is refused (balance_insufficient)
 * with nothing written.
 */
export const createPayoutOperation = defineOperation(
  paymentsApi.createPayout,
  async (ctx: PaymentsContext, { params }) => {
    const currency = checkCurrency(params.currency);
    let destinationLast4: string | null = null;
    if (ctx.account !== null) {
      const account = (await findAccount(ctx.sql, ctx.livemode, ctx.account))!;
      if (!accountStanding(account).payouts_enabled)
        throw invalidRequest(
          `Payouts are not enabled for account '${account.id}': its onboarding is not complete (requirements.currently_due).`,
          { code: 'payouts_not_allowed' },
        );
      destinationLast4 = account.bank_last4;
    }
    const id = newId('po');
    const transactionId = newId('txn');
    try {
      const row = await ctx.sql.begin(async (tx) => {
        await postMovement(tx, ctx.livemode, id, payoutMovement(ctx.holder, params.amount, currency), {
          id: transactionId,
          holder: ctx.holder,
          type: 'payout',
          amount: -params.amount,
          fee: 0,
          status: 'available',
          available_on: new Date(),
          description: params.description ?? 'STRIPE PAYOUT',
        });
        return insertPayout(tx, {
          id,
          livemode: ctx.livemode,
          holder: ctx.holder,
          amount: params.amount,
          currency,
          description: params.description ?? null,
          metadata: cleanMetadata(params.metadata),
          destination_last4: destinationLast4,
          balance_transaction: transactionId,
          arrival_date: new Date(Date.now() + 2 * ctx.deps.payoutRailStepMs),
        });
      });
      return { outcome: 'ok', body: presentPayout(row) };
    } catch (err) {
      if (isBalanceInsufficient(err))
        throw invalidRequest(
          `You have insufficient funds in your balance for this payout: its available ${currency} balance does not cover ${params.amount}.`,
          { code: 'balance_insufficient', param: 'amount', cause: err },
        );
      throw err;
    }
  },
  stripeRefusals,
);
