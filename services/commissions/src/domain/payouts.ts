import { moveRefusedMessage } from '@platform/shared/errors';
import type { MerchantSettings } from '@platform/shared/schemas/merchant-settings';
import type { HeldReason, PayoutStatus } from '@platform/shared/schemas/payouts';
import { Decimal, formatAmount, toDecimal } from './money.ts';

/**
 * The rules of payouts, free of I/O: which approved commissions become payouts, when a payout is held for a tax form,
 * and which status moves exist. The operations and the monthly schedule apply them inside their transactions.
 */

/** An approved commission in no open payout: what a payout can group. */
export interface PayableCommission {
  id: string;
  affiliate_id: string;
  currency: string;
  amount: string;
  created_at: Date;
}

/** A payout to create: one affiliate, one currency, the exact sum of its commissions. */
export interface PayoutGroup {
  affiliateId: string;
  currency: string;
  /** Plain decimal text with the currency's minor unit ("182.50"). */
  amount: string;
  commissionIds: string[];
  periodStart: Date;
  periodEnd: Date;
}

/**
 * Groups commissions by affiliate and currency and keeps the groups whose total reaches `minPayout` (compared in the
 * group's own currency: the platform converts no currencies). Groups come out sorted by affiliate then currency,
 * their commission ids sorted, so that the result depends on the input set only.
 */
export function groupPayouts(commissions: PayableCommission[], minPayout: string): PayoutGroup[] {
  const minimum = toDecimal(minPayout);
  const groups = new Map<string, { affiliateId: string; currency: string; sum: Decimal; rows: PayableCommission[] }>();
  for (const c of commissions) {
    const key = `${c.affiliate_id} ${c.currency}`;
    let group = groups.get(key);
    if (!group) {
      group = { affiliateId: c.affiliate_id, currency: c.currency, sum: new Decimal(0), rows: [] };
      groups.set(key, group);
    }
    group.sum = group.sum.plus(toDecimal(c.amount));
    group.rows.push(c);
  }
  const out: PayoutGroup[] = [];
  for (const g of groups.values()) {
    if (g.sum.isZero() || g.sum.lessThan(minimum)) continue;
    const times = g.rows.map((r) => r.created_at.getTime());
    out.push({
      affiliateId: g.affiliateId,
      currency: g.currency,
      amount: formatAmount(g.sum, g.currency),
      commissionIds: g.rows.map((r) => r.id).sort(),
      periodStart: new Date(Math.min(...times)),
      periodEnd: new Date(Math.max(...times)),
    });
  }
  return out.sort((a, b) => compare(a.affiliateId, b.affiliateId) || compare(a.currency, b.currency));
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The yearly amount past which, under `us_threshold`, an affiliate without a valid tax form is held (IRS 1099). */
const TAX_FORM_THRESHOLD = '600';

/**
 * Whether a new payout is held for a tax form. `yearTotal` is what the affiliate's payouts in the same currency and
 * calendar year (UTC) already add up to, failed and canceled ones excepted; the new payout's amount is added to it.
 */
export function payoutHold(
  policy: MerchantSettings['tax_form_policy'],
  input: { hasValidTaxForm: boolean; yearTotal: string; amount: string },
): HeldReason | null {
  if (input.hasValidTaxForm || policy === 'none') return null;
  if (policy === 'required') return 'tax_form_required';
  const total = toDecimal(input.yearTotal).plus(toDecimal(input.amount));
  return total.greaterThanOrEqualTo(toDecimal(TAX_FORM_THRESHOLD)) ? 'tax_form_required' : null;
}

/**
 * The moves of a payout. `sending` (a payout with method platform whose payment is under way) becomes sent when the
 * payment service confirms: asked again with method platform, never by hand.
 */
export const PAYOUT_MOVES: Readonly<Record<PayoutStatus, readonly PayoutStatus[]>> = {
  pending: ['sent', 'canceled'],
  sending: ['sent'],
  sent: ['paid', 'failed'],
  paid: [],
  failed: [],
  canceled: [],
};

/** Why a move may not be made (the 409 message, naming the moves there are), or null when it may. */
export function moveRefusal(from: PayoutStatus, to: PayoutStatus, heldReason: HeldReason | null): string | null {
  const allowed = PAYOUT_MOVES[from];
  if (!allowed.includes(to)) return moveRefusedMessage('payout', from, to, allowed);
  if (to === 'sent' && heldReason === 'tax_form_required')
    return 'The payout is held (tax_form_required): it can be sent once the affiliate has a valid tax form on file';
  return null;
}

/** Start and end (exclusive) of the UTC calendar year of `at`. */
export function calendarYear(at: Date): { start: Date; end: Date } {
  const year = at.getUTCFullYear();
  return { start: new Date(Date.UTC(year, 0, 1)), end: new Date(Date.UTC(year + 1, 0, 1)) };
}

/**
 * The month the payout_day schedule runs for at `at` ("2026-11"), when it is due: on or after the merchant's day of
 * the month (UTC), so a day the service was down is caught up later that month. Null when not due.
 */
export function scheduledPeriod(payoutDay: number | null, at: Date): string | null {
  if (payoutDay === null || at.getUTCDate() < payoutDay) return null;
  return `${at.getUTCFullYear()}-${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
}
