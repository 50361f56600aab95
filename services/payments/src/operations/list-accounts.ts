import { defineOperation } from '@platform/shared/operation';
import { paymentsApi } from '@platform/shared/payments/operations';
import type { PaymentsContext } from '../context.ts';
import { presentAccount, presentList } from '../present.ts';
import { accountCreatedAt, listAccounts } from '../queries/accounts.ts';
import { stripeRefusals } from '../stripe-errors.ts';

export const listAccountsOperation = defineOperation(
  paymentsApi.listAccounts,
  async (ctx: PaymentsContext, { params }) => ({
    outcome: 'ok',
    body: await presentList({
      params,
      url: '/v1/accounts',
      locate: (id) => accountCreatedAt(ctx.sql, ctx.livemode, id),
      fetch: (position, limit) => listAccounts(ctx.sql, ctx.livemode, params, position, limit),
      present: presentAccount,
    }),
  }),
  stripeRefusals,
);
