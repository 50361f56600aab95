import { Decimal as DecimalJs } from 'decimal.js';
import { minorUnitDigits } from '@platform/shared/money';

/**
 * Exact decimal arithmetic for commissions. The precision is far above what an amount (at most 15 integer digits
 * and 12 decimals) times a rate can need, so products are exact and the only rounding is the explicit one to the
 * currency's minor unit, half-even (banker's rounding: 0.125 → 0.12, 0.135 → 0.14).
 */
export const Decimal = DecimalJs.clone({
  precision: 80,
  rounding: DecimalJs.ROUND_HALF_EVEN,
  toExpNeg: -100,
  toExpPos: 100,
});
export type Decimal = InstanceType<typeof Decimal>;

/** A rate or amount as it arrives: numeric text from Postgres or the bus, or a JSON number from settings. */
export function toDecimal(value: string | number): Decimal {
  // String(0.15) is "0.15": the shortest text that reads back as the same double, i.e. what the merchant wrote.
  return new Decimal(typeof value === 'number' ? String(value) : value);
}

export function roundToMinorUnit(value: Decimal, currency: string): Decimal {
  return value.toDecimalPlaces(minorUnitDigits(currency), Decimal.ROUND_HALF_EVEN);
}

/** `amount × rate`, rounded to the currency's minor unit. */
export function applyRate(amount: Decimal, rate: Decimal, currency: string): Decimal {
  return roundToMinorUnit(amount.times(rate), currency);
}

/** Plain text with exactly the currency's decimals ("12.50", "1200", "0.125"): never exponent notation. */
export function formatAmount(value: Decimal, currency: string): string {
  return value.toFixed(minorUnitDigits(currency));
}
