import { defineOperation } from '@platform/shared/operation';
import { invalidRequest, resourceMissing } from '@platform/shared/payments/errors';
import { paymentsApi } from '@platform/shared/payments/operations';
import { settle } from '../charge.ts';
import type { PaymentsContext } from '../context.ts';
import { unexpectedState } from '../domain/intent-states.ts';
import { presentPaymentIntent } from '../present.ts';
import { findPaymentIntent } from '../queries/payment-intents.ts';
import { beginProcessing } from '../queries/processing.ts';
import { stripeRefusals } from '../stripe-errors.ts';
import { cleanMetadata } from './params.ts';

export const capturePaymentIntentOperation = defineOperation(
  paymentsApi.capturePaymentIntent,
  async (ctx: PaymentsContext, { params }) => {
    const processing = await ctx.sql.begin(async (tx) => {
      const intent = await findPaymentIntent(tx, ctx.livemode, ctx.account, ctx.id, true);
      if (!intent) throw resourceMissing('payment_intent', ctx.id, 'intent');
      if (intent.status !== 'requires_capture') throw unexpectedState(intent, 'capture', ['requires_capture']);
      const amount = params.amount_to_capture ?? Number(intent.amount);
      if (amount > Number(intent.amount))
        throw invalidRequest(
          `The amount to capture (${amount}) is greater than the amount capturable (${intent.amount}).`,
          { code: 'amount_too_large', param: 'amount_to_capture' },
        );
      const metadata = params.metadata ? cleanMetadata({ ...intent.metadata, ...params.metadata }) : undefined;
      const request = { paymentMethod: intent.payment_method!, amount, currency: intent.currency };
      return beginProcessing(tx, intent, 'capture', request, metadata);
    });
    const settled = await settle(ctx.deps, processing, ctx.log);
    return { outcome: 'ok', body: presentPaymentIntent(settled.row) };
  },
  stripeRefusals,
);
