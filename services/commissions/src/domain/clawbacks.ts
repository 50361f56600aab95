import type { OpenClawback } from '../queries/clawbacks.ts';
import { formatAmount, toDecimal } from './money.ts';
import type { PayoutGroup } from './payouts.ts';

/** A payout group after its deductions: what it pays, and what it takes back from which clawback. */
export type NetGroup = PayoutGroup & { deductions: { commissionId: string; amount: string }[] };

/**
 * Takes open clawbacks back from the new payouts of the same affiliate and currency, oldest clawback first. A payout
 * never goes below zero: a group whose net amount is zero or below `minPayout` is left out, its commissions wait (as
 * any group under the minimum does) and what it owes carries on to a later run. Free of I/O; exact decimals.
 */
export function deductClawbacks(groups: PayoutGroup[], open: OpenClawback[], minPayout: string): NetGroup[] {
  const minimum = toDecimal(minPayout);
  const owed = new Map<string, { commissionId: string; left: ReturnType<typeof toDecimal> }[]>();
  for (const k of open) {
    const key = `${k.affiliate_id} ${k.currency}`;
    const list = owed.get(key) ?? [];
    list.push({ commissionId: k.commission_id, left: toDecimal(k.remaining) });
    owed.set(key, list);
  }
  const out: NetGroup[] = [];
  for (const group of groups) {
    let net = toDecimal(group.amount);
    const deductions: NetGroup['deductions'] = [];
    for (const k of owed.get(`${group.affiliateId} ${group.currency}`) ?? []) {
      if (net.isZero()) break;
      if (k.left.isZero()) continue;
      const take = k.left.lessThan(net) ? k.left : net;
      net = net.minus(take);
      k.left = k.left.minus(take);
      deductions.push({ commissionId: k.commissionId, amount: take.toFixed() });
    }
    // Nothing left to send, or less than the minimum: the commissions wait, and so does what is owed.
    if (deductions.length > 0 && (net.isZero() || net.lessThan(minimum))) continue;
    out.push({ ...group, amount: formatAmount(net, group.currency), deductions });
  }
  return out;
}
