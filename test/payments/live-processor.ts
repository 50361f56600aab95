import type { Sql } from '@platform/shared/db';
import { sandboxProcessor, type PaymentProcessor } from '@platform/payments/processor';

/** The one live payment method of the stand-in below: a card whose funds are available at once. */
export const LIVE_CARD = 'pm_live_card_for_tests';

/**
 * A stand-in for a real card processor in live mode, which the platform does not ship: the sandbox, plus one live
 * card (LIVE_CARD) charged as the sandbox charges pm_card_bypassPending, with the sandbox's memory of idempotency
 * keys. Everything else is the sandbox's own answer, so live mode still refuses Stripe's test cards.
 */
export function withLiveCard(sql: Sql): PaymentProcessor {
  const sandbox = sandboxProcessor(sql);
  const asTest = <R extends { paymentMethod: string; livemode: boolean }>(r: R): R =>
    r.livemode && r.paymentMethod === LIVE_CARD ? { ...r, paymentMethod: 'pm_card_bypassPending', livemode: false } : r;
  return {
    lookup: (method, livemode) =>
      livemode && method === LIVE_CARD ? Promise.resolve('usable') : sandbox.lookup(method, livemode),
    authorize: (r) => sandbox.authorize(asTest(r)),
    capture: (r) => sandbox.capture(asTest(r)),
  };
}
