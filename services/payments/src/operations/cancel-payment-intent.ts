import { defineOperation } from '@platform/shared/operation';
import { resourceMissing } from '@platform/shared/payments/errors';
import { paymentsApi } from '@platform/shared/payments/operations';
import type { PaymentsContext } from '../context.ts';
import { CANCELABLE, unexpectedState } from '../domain/intent-states.ts';
import { presentPaymentIntent } from '../present.ts';
import { findPaymentIntent, updatePaymentIntent } from '../queries/payment-intents.ts';
import { stripeRefusals } from '../stripe-errors.ts';

export const cancelPaymentIntentOperation = defineOperation(
  paymentsApi.cancelPaymentIntent,
  async (ctx: PaymentsContext, { params }) => {
    const row = await ctx.sql.begin(async (tx) => {
      const intent = await findPaymentIntent(tx, ctx.livemode, ctx.account, ctx.id, true);
      if (!intent) throw resourceMissing('payment_intent', ctx.id, 'intent');
      if (!CANCELABLE.includes(intent.status)) throw unexpectedState(intent, 'cancel', CANCELABLE);
      return updatePaymentIntent(tx, ctx.id, {
        status: 'canceled',
        cancellation_reason: params.cancellation_reason ?? 'requested_by_customer',
        canceled: true,
      });
    });
    return { outcome: 'ok', body: presentPaymentIntent(row) };
  },
  stripeRefusals,
);
