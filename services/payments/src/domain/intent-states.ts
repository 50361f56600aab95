import { invalidRequest } from '@platform/shared/payments/errors';
import type { PaymentIntentRow, PaymentIntentStatus } from '../queries/payment-intents.ts';

/** The statuses a payment intent may be confirmed from. */
export const CONFIRMABLE: PaymentIntentStatus[] = [
  'requires_payment_method',
  'requires_confirmation',
  'requires_action',
];
/** The statuses a payment intent may be canceled from. */
export const CANCELABLE: PaymentIntentStatus[] = [
  'requires_payment_method',
  'requires_capture',
  'requires_confirmation',
  'requires_action',
];

const DONE: Record<'confirm' | 'capture' | 'cancel', string> = {
  confirm: 'confirmed',
  capture: 'captured',
  cancel: 'canceled',
};

/** A move the intent's status does not allow, in Stripe's words. */
export const unexpectedState = (intent: PaymentIntentRow, action: keyof typeof DONE, allowed: PaymentIntentStatus[]) =>
  invalidRequest(
    `You cannot ${action} this PaymentIntent because it has a status of ${intent.status}. Only a PaymentIntent with one of the following statuses may be ${DONE[action]}: ${allowed.join(', ')}.`,
    { code: 'payment_intent_unexpected_state' },
  );

/** A confirmation of an intent without a payment method, in Stripe's words. */
export const missingPaymentMethod = () =>
  invalidRequest(
    "You cannot confirm this PaymentIntent because it's missing a payment method. Update it with a payment_method, or confirm it with one.",
    { code: 'payment_intent_unexpected_state', param: 'payment_method' },
  );
