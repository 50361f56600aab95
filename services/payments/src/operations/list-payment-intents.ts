import { defineOperation } from '@platform/shared/operation';
import { paymentsApi } from '@platform/shared/payments/operations';
import type { PaymentsContext } from '../context.ts';
import { presentList, presentPaymentIntent } from '../present.ts';
import { listPaymentIntents, paymentIntentCreatedAt } from '../queries/payment-intents.ts';
import { stripeRefusals } from '../stripe-errors.ts';

export const listPaymentIntentsOperation = defineOperation(
  paymentsApi.listPaymentIntents,
  async (ctx: PaymentsContext, { params }) => ({
    outcome: 'ok',
    body: await presentList({
      params,
      url: '/v1/payment_intents',
      locate: (id) => paymentIntentCreatedAt(ctx.sql, ctx.livemode, ctx.account, id),
      fetch: (position, limit) => listPaymentIntents(ctx.sql, ctx.livemode, ctx.account, params, position, limit),
      present: presentPaymentIntent,
    }),
  }),
  stripeRefusals,
);
