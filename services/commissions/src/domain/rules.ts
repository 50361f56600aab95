import type { MerchantSettings } from '@platform/shared/schemas/merchant-settings';
import { applyRate, roundToMinorUnit, toDecimal, type Decimal } from './money.ts';

/** The most ancestors that earn on a conversion. */
export const MAX_LEVELS = 5;

export interface DirectRates {
  /** affiliates.custom_commission_rate (numeric text) or null. */
  customRate: string | null;
  /** The rate of the affiliate's tier (numeric text), or null without a tier. */
  tierRate: string | null;
}

export interface CommissionLine {
  /** Index into the lineage: 0 the event's affiliate, k its k-th ancestor. */
  level: number;
  /** Exact decimal text, or null for a flat-amount rule at level 0. */
  rate: string | null;
  amount: Decimal;
}

/**
 * What a conversion pays, before anyone is looked up: the direct commission and one line per level the merchant
 * pays. Pure, so that the rules can be checked without a database.
 *
 * - A rule for the event type in settings.commission_rules decides: `flat` pays its amount (whatever the event
 *   amount), `percentage` pays its rate of the amount.
 * - Without a rule, events with amount > 0 pay a percentage at the first rate that is set among the affiliate's
 *   custom_commission_rate, its tier's rate and the merchant's default_rate; other events pay nothing.
 * - Level k (1 to 5) pays settings.level_rates[k-1] times the direct commission as rounded, itself rounded.
 *   Rounding is half-even to the currency's minor unit. A line that rounds to zero is left out.
 */
export function computeCommissionLines(input: {
  eventType: string;
  amount: string;
  currency: string;
  settings: Pick<MerchantSettings, 'commission_rules' | 'default_rate' | 'level_rates'>;
  rates: DirectRates;
}): CommissionLine[] {
  const direct = directCommission(input);
  if (!direct) return [];
  const lines: CommissionLine[] = [{ level: 0, ...direct }];
  input.settings.level_rates.slice(0, MAX_LEVELS).forEach((levelRate, i) => {
    const rate = toDecimal(levelRate);
    const amount = applyRate(direct.amount, rate, input.currency);
    if (amount.gt(0)) lines.push({ level: i + 1, rate: rate.toFixed(), amount });
  });
  return lines;
}

function directCommission(input: {
  eventType: string;
  amount: string;
  currency: string;
  settings: Pick<MerchantSettings, 'commission_rules' | 'default_rate'>;
  rates: DirectRates;
}): { rate: string | null; amount: Decimal } | null {
  const rule = Object.hasOwn(input.settings.commission_rules, input.eventType)
    ? input.settings.commission_rules[input.eventType]
    : undefined;
  const eventAmount = toDecimal(input.amount);
  let rate: Decimal;
  if (rule?.kind === 'flat') {
    const amount = roundToMinorUnit(toDecimal(rule.amount), input.currency);
    return amount.gt(0) ? { rate: null, amount } : null;
  } else if (rule?.kind === 'percentage') {
    rate = toDecimal(rule.rate);
  } else {
    if (!eventAmount.gt(0)) return null;
    rate = toDecimal(input.rates.customRate ?? input.rates.tierRate ?? input.settings.default_rate);
  }
  const amount = applyRate(eventAmount, rate, input.currency);
  return amount.gt(0) ? { rate: rate.toFixed(), amount } : null;
}
