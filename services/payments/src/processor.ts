import type { Queryable } from '@platform/shared/db';

/**
 * The processor charges a payment method. The one shipped is a sandbox that answers like Stripe's test mode for
 * Stripe's test payment methods; a real processor implements the same interface. Every call that can move money
 * carries an idempotency key (the intent, the operation and its attempt): the same key asked again answers the first
 * outcome and moves nothing, so that a caller that lost an answer (a crash, a timeout) asks again safely.
 */
export type ProcessorOutcome =
  | { kind: 'authorized' }
  | { kind: 'declined'; code: string; declineCode: string; message: string }
  | { kind: 'action_required' }
  | { kind: 'unknown_method' };

export interface AuthorizeRequest {
  idempotencyKey: string;
  paymentMethod: string;
  amount: number;
  currency: string;
  livemode: boolean;
  /** The customer completed the action asked for earlier (3D Secure). */
  actionCompleted: boolean;
}

export interface CaptureRequest {
  idempotencyKey: string;
  paymentMethod: string;
  amount: number;
  currency: string;
  livemode: boolean;
}

/** Whether a payment method can be charged in a mode: `other_mode` is a test method named with a live key. */
export type PaymentMethodLookup = 'usable' | 'missing' | 'other_mode';

export interface PaymentProcessor {
  /** Looks the payment method up before anything is written (Stripe: retrieve the PaymentMethod). */
  lookup(paymentMethod: string, livemode: boolean): Promise<PaymentMethodLookup>;
  authorize(request: AuthorizeRequest): Promise<ProcessorOutcome>;
  /** Takes an authorized amount; says whether the funds are available at once or pending until they settle. */
  capture(request: CaptureRequest): Promise<{ fundsAvailableAtOnce: boolean }>;
}

/** The same idempotency key asked with other parameters: a defect of the caller, never retried into a charge. */
export class IdempotencyKeyReused extends Error {
  constructor(key: string, options?: ErrorOptions) {
    super(`processor idempotency key ${key} was used with other parameters`, options);
    this.name = 'IdempotencyKeyReused';
  }
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

/** Flat requests compared field by field (jsonb keeps its own key order). */
const sameFields = (a: object, b: object) => {
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  return Object.keys(x).length === Object.keys(y).length && Object.keys(x).every((k) => x[k] === y[k]);
};

/**
 * Stripe's test payment methods, in test mode only: pm_card_visa (and _mastercard, _amex) succeed with funds pending,
 * pm_card_bypassPending succeeds with funds available at once, pm_card_chargeDeclined* decline,
 * pm_card_authenticationRequired asks for 3D Secure and succeeds when confirmed again after it. In live mode they do
 * not exist (as with Stripe, a test object named with a live key), so test money never becomes live money.
 * Its memory of idempotency keys is the table sandbox_processor_calls: every replica's sandbox is one processor, and
 * it remembers across restarts, as a real processor does on its side.
 */
export function sandboxProcessor(sql: Queryable): PaymentProcessor {
  /** The first outcome recorded for the key, or this one recorded as the first. */
  const remember = async <T>(
    key: string,
    livemode: boolean,
    operation: 'authorize' | 'capture',
    request: object,
    outcome: T,
  ): Promise<T> => {
    const [inserted] = await sql<{ outcome: T }[]>`
      insert into sandbox_processor_calls (idempotency_key, livemode, operation, request, outcome)
      values (${key}, ${livemode}, ${operation}, ${sql.json(request as never)}, ${sql.json(outcome as never)})
      on conflict (idempotency_key) do nothing
      returning outcome`;
    if (inserted) return inserted.outcome;
    const [first] = await sql<{ operation: string; request: object; outcome: T }[]>`
      select operation, request, outcome from sandbox_processor_calls where idempotency_key = ${key}`;
    if (first!.operation !== operation || !sameFields(first!.request, request)) throw new IdempotencyKeyReused(key);
    return first!.outcome;
  };

  return {
    lookup: (paymentMethod, livemode) => {
      const known = paymentMethod in SANDBOX_METHODS;
      return Promise.resolve(known ? (livemode ? 'other_mode' : 'usable') : 'missing');
    },
    authorize: ({ idempotencyKey, livemode, ...request }) => {
      const known = livemode ? undefined : SANDBOX_METHODS[request.paymentMethod];
      let outcome: ProcessorOutcome = known ?? { kind: 'unknown_method' };
      if (outcome.kind === 'action_required' && request.actionCompleted) outcome = { kind: 'authorized' };
      return remember(idempotencyKey, livemode, 'authorize', request, outcome);
    },
    capture: ({ idempotencyKey, livemode, ...request }) => {
      if (livemode || !(request.paymentMethod in SANDBOX_METHODS))
        return Promise.reject(new Error(`the sandbox cannot capture ${request.paymentMethod} in this mode`));
      const outcome = { fundsAvailableAtOnce: request.paymentMethod === 'pm_card_bypassPending' };
      return remember(idempotencyKey, livemode, 'capture', request, outcome);
    },
  };
}
