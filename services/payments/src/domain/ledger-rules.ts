import { divideHalfEven, minorUnitDigits } from '@platform/shared/money';

/**
 * The posting rules of the double-entry ledger, without I/O. A movement is a set of postings that sum to zero per
 * currency: money is never made or lost, only moved between holders. A holder is 'platform', a connected account
 * (acct_…), or an outside party ('external:…'), the only kind whose balance may go below zero.
 */
export type Bucket = 'available' | 'pending';
export type MovementKind = 'charge' | 'availability' | 'payout' | 'payout_failure' | 'transfer';

export interface Posting {
  holder: string;
  bucket: Bucket;
  amount: number;
}

export interface Movement {
  kind: MovementKind;
  currency: string;
  postings: Posting[];
}

export const EXTERNAL = {
  /** Where card payments come from. */
  cardPayments: 'external:card_payments',
  /** The processor's fees. */
  processorFees: 'external:processor_fees',
  /** The banks payouts go to. */
  bankPayouts: 'external:bank_payouts',
} as const;

export const isExternal = (holder: string) => holder.startsWith('external:');

const FEE_PER_MILLE = 29; // 2.9 %
const FIXED_FEE_CENTS = 30;

/**
 * The sandbox processor's fee: 2.9 % plus 30 cents, the fixed part scaled to the currency's minor unit (0.30 of a
 * yen rounds to nothing, 0.300 dinar is 300 fils), each rounded half-even, never more than the amount itself.
 */
export function processingFee(amount: number, currency: string): number {
  const digits = minorUnitDigits(currency.toUpperCase());
  const percent = divideHalfEven(amount * FEE_PER_MILLE, 1000);
  const fixed =
    digits >= 2 ? FIXED_FEE_CENTS * 10 ** (digits - 2) : divideHalfEven(FIXED_FEE_CENTS, 10 ** (2 - digits));
  return Math.min(amount, percent + fixed);
}

/** A card payment of `amount`: the receiving holder gets it less the fee, pending (or at once), the processor the fee. */
export function chargeMovement(o: {
  holder: string;
  amount: number;
  fee: number;
  currency: string;
  availableAtOnce: boolean;
}): Movement {
  const postings: Posting[] = [
    { holder: EXTERNAL.cardPayments, bucket: 'available', amount: -o.amount },
    { holder: o.holder, bucket: o.availableAtOnce ? 'available' : 'pending', amount: o.amount - o.fee },
  ];
  if (o.fee > 0) postings.push({ holder: EXTERNAL.processorFees, bucket: 'available', amount: o.fee });
  // A payment the fee eats whole leaves nothing for the holder: no posting of zero.
  return checked({ kind: 'charge', currency: o.currency, postings: postings.filter((p) => p.amount !== 0) });
}

/** Pending funds that came due: from the holder's pending bucket to its available one. */
export function availabilityMovement(holder: string, amount: number, currency: string): Movement {
  return checked({
    kind: 'availability',
    currency,
    postings: [
      { holder, bucket: 'pending', amount: -amount },
      { holder, bucket: 'available', amount },
    ],
  });
}

/** A payout leaves the holder's available balance for its bank. */
export function payoutMovement(holder: string, amount: number, currency: string): Movement {
  return checked({
    kind: 'payout',
    currency,
    postings: [
      { holder, bucket: 'available', amount: -amount },
      { holder: EXTERNAL.bankPayouts, bucket: 'available', amount },
    ],
  });
}

/** A payout the bank returned: the amount comes back to the holder's available balance. */
export function payoutFailureMovement(holder: string, amount: number, currency: string): Movement {
  return checked({
    kind: 'payout_failure',
    currency,
    postings: [
      { holder: EXTERNAL.bankPayouts, bucket: 'available', amount: -amount },
      { holder, bucket: 'available', amount },
    ],
  });
}

/** Available funds from one holder's balance to another's (a merchant's account funding an affiliate's payout). */
export function transferMovement(from: string, to: string, amount: number, currency: string): Movement {
  return checked({
    kind: 'transfer',
    currency,
    postings: [
      { holder: from, bucket: 'available', amount: -amount },
      { holder: to, bucket: 'available', amount },
    ],
  });
}

/** Throws unless the postings are whole, non-zero and sum to zero. */
export function checked(movement: Movement): Movement {
  let sum = 0;
  for (const p of movement.postings) {
    if (!Number.isSafeInteger(p.amount) || p.amount === 0) throw new Error(`posting of ${p.amount} to ${p.holder}`);
    sum += p.amount;
  }
  if (sum !== 0) throw new Error(`movement ${movement.kind} does not balance: ${sum}`);
  return movement;
}
