import { newId } from '@platform/shared/ids';
import { withoutDeadline } from '@platform/shared/deadline';
import type { Logger } from '@platform/shared/log';
import type { TransactionSql } from '@platform/shared/db';
import { invalidRequest } from '@platform/shared/payments/errors';
import type { PaymentsDeps } from './deps.ts';
import { chargeMovement, processingFee } from './domain/ledger-rules.ts';
import { postMovement } from './queries/ledger.ts';
import { findPaymentIntent, type PaymentIntentRow } from './queries/payment-intents.ts';
import { authorizationChange, type Confirmation } from './domain/charge.ts';
import { finishProcessing, type ProcessingIntent } from './queries/processing.ts';

/**
 * Refuses, before anything is written, a payment method the processor does not have in the key's mode. A test
 * method with a live key gets Stripe's own answer for a test object in live mode: test money never becomes live money.
 */
export async function checkPaymentMethod(deps: PaymentsDeps, livemode: boolean, paymentMethod: string) {
  const found = await deps.processor.lookup(paymentMethod, livemode);
  if (found === 'usable') return;
  const similar =
    found === 'other_mode'
      ? '; a similar object exists in test mode, but a live mode key was used to make this request.'
      : '';
  throw invalidRequest(`No such PaymentMethod: '${paymentMethod}'${similar}`, {
    code: 'resource_missing',
    param: 'payment_method',
  });
}

/**
 * Asks the processor what an intent in `processing` asked (no database, no lock held): confirm authorizes, then
 * captures unless capture is manual; capture captures. The idempotency keys are the intent, the operation and the
 * attempt, so that the reconciler asking again after a crash gets the first answers and no money moves twice.
 */
export async function askProcessor(deps: PaymentsDeps, intent: ProcessingIntent): Promise<Confirmation> {
  const { paymentMethod, amount, currency, actionCompleted } = intent.processing_request;
  const key = (operation: string) => `${intent.id}:${operation}:${intent.processor_attempts}`;
  const capture = async (): Promise<Confirmation> => {
    const taken = await deps.processor.capture({
      idempotencyKey: key('capture'),
      paymentMethod,
      amount,
      currency,
      livemode: intent.livemode,
    });
    return {
      status: 'succeeded',
      last_payment_error: null,
      amount_received: amount,
      captured: { amount, fundsAvailableAtOnce: taken.fundsAvailableAtOnce },
    };
  };
  if (intent.processing_operation === 'capture') return capture();
  const outcome = await deps.processor.authorize({
    idempotencyKey: key('confirm'),
    paymentMethod,
    amount,
    currency,
    livemode: intent.livemode,
    actionCompleted: actionCompleted ?? false,
  });
  if (outcome.kind === 'authorized' && intent.capture_method !== 'manual')
    return { ...(await capture()), payment_method: paymentMethod };
  return authorizationChange(outcome, paymentMethod);
}

/**
 * Finishes an intent committed as `processing`: asks the processor (outside any transaction), then writes the
 * outcome and the ledger's record in one transaction, if this attempt is still in flight. A processor that fails to
 * answer, or an outcome that cannot be written (a ledger row locked past lock_timeout, the database gone), leaves the
 * intent `processing` for the reconciler, which asks again with the same keys. Answers the intent as it then is, with
 * the outcome that made it so (null: none known here). Never throws once the intent is processing: money may have
 * been taken, so the caller's answer must be kept on its Idempotency-Key (a 5xx gives the key up, and the retry would
 * create and charge another intent).
 */
export async function settle(
  deps: PaymentsDeps,
  intent: ProcessingIntent,
  log: Logger,
): Promise<{ row: PaymentIntentRow; decision: Confirmation | null }> {
  let decision: Confirmation;
  try {
    decision = await askProcessor(deps, intent);
  } catch (err) {
    log.warn('processor call failed; the intent stays processing for the reconciler', { err, intent: intent.id });
    return { row: intent, decision: null };
  }
  const { captured, ...change } = decision;
  try {
    // What the processor did is done: its record is not rolled back at the caller's deadline (the pool's timeouts
    // still bound it, so the answer comes while the key's claim lasts).
    const written = await withoutDeadline(() =>
      deps.sql.begin(async (tx) => {
        const row = await finishProcessing(tx, intent, change);
        if (row && captured) await recordCharge(deps, tx, row, captured);
        return row;
      }),
    );
    if (written) return { row: written, decision };
    // Another finisher wrote this attempt's outcome (the same, replayed by the processor): answer what it wrote.
    const current = await findPaymentIntent(deps.sql, intent.livemode, intent.account_id, intent.id);
    return { row: current!, decision };
  } catch (err) {
    log.warn('outcome not written; the intent stays processing for the reconciler', { err, intent: intent.id });
    return { row: intent, decision: null };
  }
}

/**
 * Records money taken for an intent, in the caller's transaction: the ledger's movement into the receiving balance
 * (the transfer destination's, the Stripe-Account's, or the platform's) less the processor's fee, and the balance
 * transaction that shows it, pending until its funds are available.
 */
async function recordCharge(
  deps: PaymentsDeps,
  tx: TransactionSql,
  intent: Pick<
    PaymentIntentRow,
    'id' | 'livemode' | 'currency' | 'transfer_destination' | 'account_id' | 'description'
  >,
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
  const availableOn = new Date(Date.now() + (fundsAvailableAtOnce ? 0 : deps.availabilityDelaySeconds * 1000));
  await postMovement(tx, intent.livemode, intent.id, movement, {
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
