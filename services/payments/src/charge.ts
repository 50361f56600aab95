import { newId } from '@platform/shared/ids';
import type { TransactionSql } from '@platform/shared/db';
import { invalidRequest, type StripeErrorBody } from '@platform/shared/payments/errors';
import { chargeMovement, processingFee } from './ledger-rules.ts';
import type { PaymentsContext } from './operation.ts';
import { presentPaymentIntent } from './present.ts';
import { postMovement } from './queries/ledger.ts';
import { updatePaymentIntent, type PaymentIntentRow } from './queries/payment-intents.ts';

/** What a confirmation left: the intent, and the card error to answer with when the card was declined. */
export interface Confirmed {
  row: PaymentIntentRow;
  declined?: StripeErrorBody;
}

/**
 * Confirms a locked intent with a payment method, in the caller's transaction: the processor authorizes, and the
 * intent moves to Stripe's next status. A decline is recorded (requires_payment_method with last_payment_error) and
 * answered as a card error after the commit, so that the intent keeps what happened.
 */
export async function confirmWith(
  ctx: PaymentsContext,
  tx: TransactionSql,
  intent: PaymentIntentRow,
  paymentMethod: string,
): Promise<Confirmed> {
  const outcome = await ctx.deps.processor.authorize({
    paymentMethod,
    amount: Number(intent.amount),
    currency: intent.currency,
    livemode: ctx.livemode,
    actionCompleted: intent.status === 'requires_action' && intent.payment_method === paymentMethod,
  });
  switch (outcome.kind) {
    case 'unknown_method':
      throw invalidRequest(`No such PaymentMethod: '${paymentMethod}'`, {
        code: 'resource_missing',
        param: 'payment_method',
      });
    case 'declined': {
      const error = {
        type: 'card_error',
        code: outcome.code,
        decline_code: outcome.declineCode,
        message: outcome.message,
        payment_method: { id: paymentMethod, object: 'payment_method' as const },
      };
      const row = await updatePaymentIntent(tx, intent.id, {
        status: 'requires_payment_method',
        payment_method: null,
        last_payment_error: error,
      });
      return {
        row,
        declined: {
          type: 'card_error',
          code: outcome.code,
          decline_code: outcome.declineCode,
          message: outcome.message,
          payment_intent: presentPaymentIntent(row),
        },
      };
    }
    case 'action_required':
      return {
        row: await updatePaymentIntent(tx, intent.id, {
          status: 'requires_action',
          payment_method: paymentMethod,
          last_payment_error: null,
        }),
      };
    case 'authorized':
      if (intent.capture_method === 'manual')
        return {
          row: await updatePaymentIntent(tx, intent.id, {
            status: 'requires_capture',
            payment_method: paymentMethod,
            last_payment_error: null,
          }),
        };
      return { row: await capture(ctx, tx, { ...intent, payment_method: paymentMethod }, Number(intent.amount)) };
  }
}

/**
 * Takes the money: the processor captures, the ledger records the payment in the receiving balance (the transfer
 * destination's, the Stripe-Account's, or the platform's) less the processor's fee, and a balance transaction shows
 * it, pending until its funds are available.
 */
export async function capture(
  ctx: PaymentsContext,
  tx: TransactionSql,
  intent: PaymentIntentRow,
  amount: number,
): Promise<PaymentIntentRow> {
  const { fundsAvailableAtOnce } = await ctx.deps.processor.capture({
    paymentMethod: intent.payment_method!,
    amount,
    currency: intent.currency,
  });
  const holder = intent.transfer_destination ?? intent.account_id ?? 'platform';
  const fee = processingFee(amount, intent.currency);
  const movement = chargeMovement({
    holder,
    amount,
    fee,
    currency: intent.currency,
    availableAtOnce: fundsAvailableAtOnce,
  });
  const availableOn = new Date(Date.now() + (fundsAvailableAtOnce ? 0 : ctx.deps.availabilityDelaySeconds * 1000));
  await postMovement(tx, ctx.livemode, intent.id, movement, {
    id: newId('txn'),
    holder,
    type: holder === 'platform' ? 'charge' : 'payment',
    amount,
    fee,
    // Nothing reaches the holder when the fee takes it all: there is nothing to wait for.
    status: fundsAvailableAtOnce || amount === fee ? 'available' : 'pending',
    available_on: availableOn,
    description: intent.description,
  });
  return updatePaymentIntent(tx, intent.id, {
    status: 'succeeded',
    amount_received: amount,
    payment_method: intent.payment_method,
    last_payment_error: null,
  });
}
