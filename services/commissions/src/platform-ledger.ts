import type { Queryable } from '@platform/shared/db';
import { isId } from '@platform/shared/ids';
import { findPayout, lockPayoutCommissions, type PayoutRow } from './queries/payouts.ts';
import { toDecimal } from './domain/money.ts';
import { applyPayoutMove } from './payout-move.ts';

/**
 * What the payment service says of a payout's ledger payout: `made` (the money left the merchant's account; the
 * answer to a send), `paid` or `failed` (a settled report).
 */
interface LedgerPayout {
  id: string;
  status: 'made' | 'paid' | 'failed';
  failureReason?: string | null;
  /** What it moved (decimal text, ISO 4217), when the answer says (a send's answer does; a settled report does not). */
  amount?: string;
  currency?: string;
}

/**
 * Why the payout and its ledger payout disagree, or null when the payout can follow it: a ledger payout exists, so
 * the payout must be pending or sending (then sent), or sent, paid or failed through the platform with that ledger
 * payout as reference, and not paid here when the ledger failed it (or the other way round); and, when the answer
 * names it, the amount it moved is the payout's.
 */
function ledgerDisagreement(payout: PayoutRow, ledger: LedgerPayout): string | null {
  const made = `ledger payout ${ledger.id} (${ledger.status})`;
  if (payout.status === 'canceled') return `the payout is canceled, but ${made} moved its money`;
  // Following it would record as paid an amount that is not what moved.
  if (
    ledger.amount !== undefined &&
    (!toDecimal(ledger.amount).eq(toDecimal(payout.amount)) || ledger.currency !== payout.currency)
  )
    return `the payout is ${payout.amount} ${payout.currency}, but ${made} moved ${ledger.amount} ${ledger.currency}`;
  if (payout.status === 'pending' || payout.status === 'sending') return null;
  if (payout.method !== 'platform') return `the payout was sent by hand, but ${made} moved its money too`;
  if (payout.reference !== ledger.id) return `the payout is paid by ledger payout ${payout.reference}, not ${made}`;
  if (payout.status === 'paid' && ledger.status === 'failed') return `the payout is paid here, but ${made} failed`;
  if (payout.status === 'failed' && ledger.status === 'paid') return `the payout failed here, but ${made} was paid`;
  return null;
}

/**
 * Moves the payout as far as its ledger payout went, in the caller's transaction: pending or sending → sent (the
 * ledger payout as reference), then paid or failed when the ledger payout settled; a payout already there is left
 * as it is. A disagreement changes nothing and is answered for the caller to log, count and acknowledge: sending the
 * same answer again would not change it.
 */
export async function followLedger(
  tx: Queryable,
  merchantId: string,
  payoutId: string,
  ledger: LedgerPayout,
  at: Date,
): Promise<{ payout: PayoutRow | undefined; changed: boolean; mismatch: string | null }> {
  if (!isId('po', payoutId) || !(await findPayout(tx, merchantId, payoutId)))
    return { payout: undefined, changed: false, mismatch: `no such payout, but ledger payout ${ledger.id} pays it` };
  // Commissions first, then the payout: the lock order of every payout move.
  await lockPayoutCommissions(tx, merchantId, payoutId);
  const current = (await findPayout(tx, merchantId, payoutId, true))!;
  const mismatch = ledgerDisagreement(current, ledger);
  if (mismatch) return { payout: current, changed: false, mismatch };
  let changed = false;
  if (current.status === 'pending' || current.status === 'sending')
    changed = (
      await applyPayoutMove(
        tx,
        merchantId,
        payoutId,
        { status: 'sent', method: 'platform', reference: ledger.id },
        at,
        { byLedger: true },
      )
    ).changed;
  if (ledger.status !== 'made') {
    const settled = await applyPayoutMove(
      tx,
      merchantId,
      payoutId,
      ledger.status === 'paid'
        ? { status: 'paid' }
        : { status: 'failed', failure_reason: ledger.failureReason ?? 'payout_failed' },
      at,
      { byLedger: true },
    );
    changed ||= settled.changed;
  }
  return { payout: (await findPayout(tx, merchantId, payoutId))!, changed, mismatch: null };
}
