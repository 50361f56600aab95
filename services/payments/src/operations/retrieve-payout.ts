import { defineOperation } from '@platform/shared/operation';
import { resourceMissing } from '@platform/shared/payments/errors';
import { paymentsApi } from '@platform/shared/payments/operations';
import type { PaymentsContext } from '../context.ts';
import { presentPayout } from '../present.ts';
import { findPayout } from '../queries/payouts.ts';
import { stripeRefusals } from '../stripe-errors.ts';

export const retrievePayoutOperation = defineOperation(
  paymentsApi.retrievePayout,
  async (ctx: PaymentsContext) => {
    const row = await findPayout(ctx.sql, ctx.livemode, ctx.holder, ctx.id);
    if (!row) throw resourceMissing('payout', ctx.id, 'payout');
    return { outcome: 'ok', body: presentPayout(row) };
  },
  stripeRefusals,
);
