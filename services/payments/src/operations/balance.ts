import { paymentsApi } from '@platform/shared/payments/operations';
import type { PaymentsDeps } from '../deps.ts';
import { listPage } from '../list.ts';
import { definePaymentsOperation } from '../operation.ts';
import { presentBalanceTransaction } from '../present.ts';
import { balances } from '../queries/ledger.ts';
import { listTransactions, transactionCreatedAt } from '../queries/transactions.ts';

/** GET /v1/transactions and Stripe's own path for it, /v1/balance_transactions: the same list. */
export const listTransactionsOperations = (deps: PaymentsDeps) =>
  [paymentsApi.listTransactions, paymentsApi.listBalanceTransactions].map((spec) =>
    definePaymentsOperation(deps, spec, (ctx, params) =>
      listPage({
        params,
        url: spec.path,
        locate: (id) => transactionCreatedAt(ctx.sql, ctx.livemode, ctx.holder, id),
        fetch: (position, limit) => listTransactions(ctx.sql, ctx.livemode, ctx.holder, params, position, limit),
        present: presentBalanceTransaction,
      }),
    ),
  );

export const retrieveBalanceOperation = (deps: PaymentsDeps) =>
  definePaymentsOperation(deps, paymentsApi.retrieveBalance, async (ctx) => {
    const rows = await balances(ctx.sql, ctx.livemode, ctx.holder);
    const of = (bucket: 'available' | 'pending') =>
      rows.filter((r) => r.bucket === bucket).map((r) => ({ amount: Number(r.amount), currency: r.currency }));
    return { object: 'balance' as const, available: of('available'), pending: of('pending'), livemode: ctx.livemode };
  });
