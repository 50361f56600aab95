import { defineOperation } from '@platform/shared/operation';
import { paymentsApi } from '@platform/shared/payments/operations';
import type { PaymentsContext } from '../context.ts';
import { presentList, presentPayout } from '../present.ts';
import { findPayout, listPayouts } from '../queries/payouts.ts';
import { stripeRefusals } from '../stripe-errors.ts';

export const listPayoutsOperation = defineOperation(
  paymentsApi.listPayouts,
  async (ctx: PaymentsContext, { params }) => ({
    outcome: 'ok',
    body: await presentList({
      params,
      url: '/v1/payouts',
      locate: async (id) => (await findPayout(ctx.sql, ctx.livemode, ctx.holder, id))?.created_at ?? null,
      fetch: (position, limit) => listPayouts(ctx.sql, ctx.livemode, ctx.holder, params, position, limit),
      present: presentPayout,
    }),
  }),
  stripeRefusals,
);
