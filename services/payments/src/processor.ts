/**
 * The processor charges a payment method. The one shipped is a sandbox that answers like Stripe's test mode for
 * Stripe's test payment methods; a real processor implements the same interface.
 */
export type ProcessorOutcome =
  | { kind: 'authorized' }
  | { kind: 'declined'; code: string; declineCode: string; message: string }
  | { kind: 'action_required' }
  | { kind: 'unknown_method' };

export interface PaymentProcessor {
  authorize(request: {
    paymentMethod: string;
    amount: number;
    currency: string;
    livemode: boolean;
    /** The customer completed the action asked for earlier (3D Secure). */
    actionCompleted: boolean;
  }): Promise<ProcessorOutcome>;
  /** Takes an authorized amount; says whether the funds are available at once or pending until they settle. */
  capture(request: {
    paymentMethod: string;
    amount: number;
    currency: string;
  }): Promise<{ fundsAvailableAtOnce: boolean }>;
}

const declined = (declineCode: string, message: string, code = 'card_declined'): ProcessorOutcome => ({
  kind: 'declined',
  code,
  declineCode,
  message,
});

const SANDBOX_METHODS: Record<string, ProcessorOutcome> = {
  pm_card_visa: { kind: 'authorized' },
  pm_card_mastercard: { kind: 'authorized' },
  pm_card_amex: { kind: 'authorized' },
  pm_card_bypassPending: { kind: 'authorized' },
  pm_card_chargeDeclined: declined('generic_decline', 'Your card was declined.'),
  pm_card_chargeDeclinedInsufficientFunds: declined('insufficient_funds', 'Your card has insufficient funds.'),
  pm_card_chargeDeclinedExpiredCard: declined('expired_card', 'Your card has expired.', 'expired_card'),
  pm_card_authenticationRequired: { kind: 'action_required' },
};

/**
 * Stripe's test payment methods: pm_card_visa (and _mastercard, _amex) succeed with funds pending,
 * pm_card_bypassPending succeeds with funds available at once, pm_card_chargeDeclined* decline,
 * pm_card_authenticationRequired asks for 3D Secure and succeeds when confirmed again after it.
 */
export const sandboxProcessor: PaymentProcessor = {
  authorize: ({ paymentMethod, actionCompleted }) => {
    const outcome = SANDBOX_METHODS[paymentMethod];
    if (!outcome) return Promise.resolve({ kind: 'unknown_method' });
    if (outcome.kind === 'action_required' && actionCompleted) return Promise.resolve({ kind: 'authorized' });
    return Promise.resolve(outcome);
  },
  capture: ({ paymentMethod }) => Promise.resolve({ fundsAvailableAtOnce: paymentMethod === 'pm_card_bypassPending' }),
};
