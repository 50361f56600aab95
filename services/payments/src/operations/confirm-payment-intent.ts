import { defineOperation } from '@platform/shared/operation';
import { invalidRequest, resourceMissing } from '@platform/shared/payments/errors';
import { paymentsApi } from '@platform/shared/payments/operations';
import { checkPaymentMethod, settle } from '../charge.ts';
import { confirmed } from '../domain/charge.ts';
import type { PaymentsContext } from '../context.ts';
import { CONFIRMABLE, missingPaymentMethod, unexpectedState } from '../domain/intent-states.ts';
import { presentPaymentIntent } from '../present.ts';
import { findPaymentIntent } from '../queries/payment-intents.ts';
import { beginProcessing } from '../queries/processing.ts';
import { stripeRefusals } from '../stripe-errors.ts';

export const confirmPaymentIntentOperation = defineOperation(
  paymentsApi.confirmPaymentIntent,
  async (ctx: PaymentsContext, { params }) => {
    const id = ctx.id;
    const seen = await findPaymentIntent(ctx.sql, ctx.livemode, ctx.account, id);
    if (!seen) throw resourceMissing('payment_intent', id, 'intent');
    const named = params.payment_method ?? seen.payment_method;
    if (named) await checkPaymentMethod(ctx.deps, ctx.livemode, named);
    // The lock is held only to move the intent to processing; the processor is called after the commit.
    const begun = await ctx.sql.begin(async (tx) => {
      const intent = (await findPaymentIntent(tx, ctx.livemode, ctx.account, id, true))!;
      // Money may be moving (a confirmation whose answer was lost, retried with its key): the intent is answered as it
      // stands, never a 400 that a retry would replay while the charge goes through; its finisher or the reconciler
      // completes it.
      if (intent.status === 'processing') return { standing: intent };
      if (!CONFIRMABLE.includes(intent.status)) throw unexpectedState(intent, 'confirm', CONFIRMABLE);
      const paymentMethod = params.payment_method ?? intent.payment_method;
      if (!paymentMethod) throw missingPaymentMethod();
      // Another request changed the intent since it was read: the processor is never asked under the lock.
      if (paymentMethod !== named)
        throw invalidRequest(
          'This object cannot be accessed right now because another API request is currently accessing it. Retry the request.',
          { code: 'lock_timeout', status: 409 },
        );
      const processing = await beginProcessing(tx, intent, 'confirm', {
        paymentMethod,
        amount: Number(intent.amount),
        currency: intent.currency,
        actionCompleted: intent.status === 'requires_action' && intent.payment_method === paymentMethod,
      });
      return { processing };
    });
    if (begun.standing) return { outcome: 'ok', body: presentPaymentIntent(begun.standing) };
    const settled = await settle(ctx.deps, begun.processing, ctx.log);
    return { outcome: 'ok', body: confirmed(settled.row, settled.decision) };
  },
  stripeRefusals,
);
