/**
 * Currencies and their minor units (ISO 4217 exponent): how many decimals an amount in that currency may carry,
 * and the unit commissions are rounded to (half-even). Dependency-free, so every service can validate amounts with
 * it; arithmetic on amounts is done with exact decimals by the services that compute (never with floats).
 */

/** Currencies whose minor unit is not the hundredth. Every other well-formed code has two decimals. */
const MINOR_UNIT_EXCEPTIONS: Readonly<Record<string, number>> = {
  // no minor unit
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  // thousandths
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  // ten-thousandths (accounting units)
  CLF: 4,
  UYW: 4,
};

const CURRENCY_PATTERN = /^[A-Z]{3}$/;

export function isCurrencyCode(value: unknown): value is string {
  return typeof value === 'string' && CURRENCY_PATTERN.test(value);
}

/** Decimals of the currency's minor unit: JPY 0, USD 2, KWD 3. */
export function minorUnitDigits(currency: string): number {
  if (!isCurrencyCode(currency)) throw new Error(`not an ISO 4217 code: ${JSON.stringify(currency)}`);
  return MINOR_UNIT_EXCEPTIONS[currency] ?? 2;
}

/** A non-negative decimal written plainly ("19.99", "0", "1200"): the form amounts travel in between services. */
const DECIMAL_PATTERN = /^(0|[1-9]\d{0,14})(\.\d{1,12})?$/;

export function isDecimalString(value: unknown): value is string {
  return typeof value === 'string' && DECIMAL_PATTERN.test(value);
}

/** Decimals written in a plain decimal string, ignoring trailing zeros ("19.90" has 1). */
export function decimalPlaces(amount: string): number {
  const dot = amount.indexOf('.');
  if (dot < 0) return 0;
  return amount.slice(dot + 1).replace(/0+$/, '').length;
}
