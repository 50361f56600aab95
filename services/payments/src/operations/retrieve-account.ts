import { defineOperation } from '@platform/shared/operation';
import { resourceMissing } from '@platform/shared/payments/errors';
import { paymentsApi } from '@platform/shared/payments/operations';
import type { PaymentsContext } from '../context.ts';
import { presentAccount } from '../present.ts';
import { findAccount } from '../queries/accounts.ts';
import { stripeRefusals } from '../stripe-errors.ts';

export const retrieveAccountOperation = defineOperation(
  paymentsApi.retrieveAccount,
  async (ctx: PaymentsContext) => {
    const row = await findAccount(ctx.sql, ctx.livemode, ctx.id);
    if (!row) throw resourceMissing('account', ctx.id);
    return { outcome: 'ok', body: presentAccount(row) };
  },
  stripeRefusals,
);
