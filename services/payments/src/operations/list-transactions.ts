import { defineOperation } from '@platform/shared/operation';
import { paymentsApi } from '@platform/shared/payments/operations';
import type { PaymentsContext } from '../context.ts';
import { presentBalanceTransaction, presentList } from '../present.ts';
import { listTransactions, transactionCreatedAt } from '../queries/transactions.ts';
import { stripeRefusals } from '../stripe-errors.ts';

/** GET /v1/transactions and Stripe's own path for it, /v1/balance_transactions: the same list under both names. */
export const listTransactionsOperations = [paymentsApi.listTransactions, paymentsApi.listBalanceTransactions].map(
  (spec) =>
    defineOperation(
      spec,
      async (ctx: PaymentsContext, { params }) => ({
        outcome: 'ok',
        body: await presentList({
          params,
          url: spec.path,
          locate: (id) => transactionCreatedAt(ctx.sql, ctx.livemode, ctx.holder, id),
          fetch: (position, limit) => listTransactions(ctx.sql, ctx.livemode, ctx.holder, params, position, limit),
          present: presentBalanceTransaction,
        }),
      }),
      stripeRefusals,
    ),
);
