import { invalidRequest, StripeError } from '@platform/shared/payments/errors';
import { presentPaymentIntent } from '../present.ts';
import type { ProcessorOutcome } from '../processor.ts';
import type { PaymentIntentRow } from '../queries/payment-intents.ts';
import type { ProcessedChange } from '../queries/processing.ts';

/** A processor call's outcome: the intent's change, and the money taken (automatic or manual capture), if any. */
export type Confirmation = ProcessedChange & { captured?: { amount: number; fundsAvailableAtOnce: boolean } };

/**
 * What an authorization's outcome makes of the intent, when nothing is captured with it: declined or unknown, it
 * needs another payment method (with Stripe's error); it may need the customer's action; authorized (capture is
 * manual: an automatic one is captured at once instead), it waits for the capture.
 */
export function authorizationChange(outcome: ProcessorOutcome, paymentMethod: string): Confirmation {
  const method = { id: paymentMethod, object: 'payment_method' as const };
  switch (outcome.kind) {
    case 'unknown_method':
      // Looked up before the intent was written; a processor that forgot it since is answered as Stripe would.
      return {
        status: 'requires_payment_method',
        payment_method: null,
        last_payment_error: {
          type: 'invalid_request_error',
          code: 'resource_missing',
          message: `No such PaymentMethod: '${paymentMethod}'`,
          payment_method: method,
        },
      };
    case 'declined':
      return {
        status: 'requires_payment_method',
        payment_method: null,
        last_payment_error: {
          type: 'card_error',
          code: outcome.code,
          decline_code: outcome.declineCode,
          message: outcome.message,
          payment_method: method,
        },
      };
    case 'action_required':
      return { status: 'requires_action', payment_method: paymentMethod, last_payment_error: null };
    case 'authorized':
      return { status: 'requires_capture', payment_method: paymentMethod, last_payment_error: null };
  }
}

/** The answer to a confirmation: the intent, or (declined) the card error that carries it, status 402. */
export function confirmed(row: PaymentIntentRow, decision: Confirmation | null) {
  const error = row.last_payment_error;
  if (decision?.status === 'requires_payment_method' && error?.type === 'invalid_request_error')
    throw invalidRequest(error.message, { code: error.code, param: 'payment_method' });
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
