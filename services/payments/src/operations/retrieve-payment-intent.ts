import { defineOperation } from '@platform/shared/operation';
import { resourceMissing } from '@platform/shared/payments/errors';
import { paymentsApi } from '@platform/shared/payments/operations';
import type { PaymentsContext } from '../context.ts';
import { presentPaymentIntent } from '../present.ts';
import { findPaymentIntent } from '../queries/payment-intents.ts';
import { stripeRefusals } from '../stripe-errors.ts';

export const retrievePaymentIntentOperation = defineOperation(
  paymentsApi.retrievePaymentIntent,
  async (ctx: PaymentsContext) => {
    const row = await findPaymentIntent(ctx.sql, ctx.livemode, ctx.account, ctx.id);
    if (!row) throw resourceMissing('payment_intent', ctx.id, 'intent');
    return { outcome: 'ok', body: presentPaymentIntent(row) };
  },
  stripeRefusals,
);
