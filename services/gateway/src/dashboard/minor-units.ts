import { decimalPlaces, isDecimalString, minorUnitDigits } from '@platform/shared/money';

/**
 * Between the payment API's integer minor units (Stripe's: 25000 is 250.00 USD, 500 is 500 JPY) and the decimal
 * strings people read and type, exactly: by digits, never through a float.
 */
export function minorToDecimal(amount: number, currency: string): string {
  const digits = minorUnitDigits(currency.toUpperCase());
  const sign = amount < 0 ? '-' : '';
  const text = String(Math.abs(amount)).padStart(digits + 1, '0');
  return digits === 0 ? sign + text : `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/** A decimal string in the currency's minor units, or null when it has more decimals than the currency has. */
export function decimalToMinor(amount: string, currency: string): number | null {
  const digits = minorUnitDigits(currency.toUpperCase());
  if (!isDecimalString(amount) || decimalPlaces(amount) > digits) return null;
  const [whole, fraction = ''] = amount.split('.');
  return Number(whole! + fraction.padEnd(digits, '0').slice(0, digits));
}
