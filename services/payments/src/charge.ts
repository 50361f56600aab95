import { newId } from '@platform/shared/ids';
import type { TransactionSql } from '@platform/shared/db';
import { invalidRequest, StripeError } from '@platform/shared/payments/errors';
import { chargeMovement, processingFee } from './ledger-rules.ts';
import type { PaymentsContext } from './operation.ts';
import { presentPaymentIntent } from './present.ts';
import { postMovement } from './queries/ledger.ts';
import type { PaymentIntentRow } from './queries/payment-intents.ts';

/** The intent's fields that a confirmation changes. */
export type Confirmation = Pick<PaymentIntentRow, 'status' | 'payment_method' | 'last_payment_error'> & {
  amount_received?: number;
  /** Money was taken: the ledger records it (record below). */
  captured?: { amount: number; fundsAvailableAtOnce: boolean };
};

/**
 * What confirming an intent with a payment method makes of it, decided by the processor and nothing else (no
 * database): Stripe's next status, and whether money was taken (automatic capture). The caller writes it: a new
 * intent in one insert, an existing, locked one in one update, with the ledger's record in the same transaction.
 */
export async function confirmation(
  ctx: PaymentsContext,
  intent: Pick<PaymentIntentRow, 'amount' | 'currency' | 'status' | 'payment_method' | 'capture_method'>,
  paymentMethod: string,
): Promise<Confirmation> {
  const amount = Number(intent.amount);
  const outcome = await ctx.deps.processor.authorize({
    paymentMethod,
    amount,
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
    case 'declined':
      return {
        status: 'requires_payment_method',
        payment_method: null,
        last_payment_error: {
          type: 'card_error',
          code: outcome.code,
          decline_code: outcome.declineCode,
          message: outcome.message,
          payment_method: { id: paymentMethod, object: 'payment_method' },
        },
      };
    case 'action_required':
      return { status: 'requires_action', payment_method: paymentMethod, last_payment_error: null };
    case 'authorized': {
      if (intent.capture_method === 'manual')
        return { status: 'requires_capture', payment_method: paymentMethod, last_payment_error: null };
      const taken = await ctx.deps.processor.capture({ paymentMethod, amount, currency: intent.currency });
      return {
        status: 'succeeded',
        payment_method: paymentMethod,
        last_payment_error: null,
        amount_received: amount,
        captured: { amount, fundsAvailableAtOnce: taken.fundsAvailableAtOnce },
      };
    }
  }
}

/** The answer to a confirmation: the intent, or (declined) the card error that carries it, status 402. */
export function confirmed(row: PaymentIntentRow, decision: Confirmation | null) {
  const error = row.last_payment_error;
  if (decision?.status === 'requires_payment_method' && error)
    throw new StripeError(402, {
      type: 'card_error',
      code: error.code,
      ...(error.decline_code ? { decline_code: error.decline_code } : {}),
      message: error.message,
      payment_intent: presentPaymentIntent(row),
    });
  return presentPaymentIntent(row);
}

/**
 * Records money taken for an intent, in the caller's transaction: the ledger's movement into the receiving balance
 * (the transfer destination's, the Stripe-Account's, or the platform's) less the processor's fee, and the balance
 * transaction that shows it, pending until its funds are available.
 */
export async function recordCharge(
  ctx: PaymentsContext,
  tx: TransactionSql,
  intent: Pick<PaymentIntentRow, 'id' | 'currency' | 'transfer_destination' | 'account_id' | 'description'>,
  captured: { amount: number; fundsAvailableAtOnce: boolean },
): Promise<void> {
  const { amount, fundsAvailableAtOnce } = captured;
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
}
