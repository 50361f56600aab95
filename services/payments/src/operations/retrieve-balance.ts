import { defineOperation } from '@platform/shared/operation';
import { paymentsApi } from '@platform/shared/payments/operations';
import type { PaymentsContext } from '../context.ts';
import { balances } from '../queries/ledger.ts';
import { stripeRefusals } from '../stripe-errors.ts';

export const retrieveBalanceOperation = defineOperation(
  paymentsApi.retrieveBalance,
  async (ctx: PaymentsContext) => {
    const rows = await balances(ctx.sql, ctx.livemode, ctx.holder);
    const of = (bucket: 'available' | 'pending') =>
      rows.filter((r) => r.bucket === bucket).map((r) => ({ amount: Number(r.amount), currency: r.currency }));
    return {
      outcome: 'ok',
      body: { object: 'balance' as const, available: of('available'), pending: of('pending'), livemode: ctx.livemode },
    };
  },
  stripeRefusals,
);
