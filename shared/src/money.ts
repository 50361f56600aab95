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

/**
 * Between decimal amounts ("182.50", as people type them and the services exchange them) and integer minor units
 * (18250, as the payment API and its ledger store them), exactly: by digits, never through a float. The only
 * module that converts; every caller shares its rules.
 *
 * Converting never rounds: a decimal with more decimals than its currency has is refused (null), as the contract
 * refuses such an amount where it comes in. Where arithmetic on minor units leaves a fraction (a percentage fee),
 * the one rounding rule is half to even, divideHalfEven below, as commission amounts are rounded.
 */

/**
 * A plain decimal (isDecimalString: no sign, no exponent, no leading zeros) in the currency's minor units. Null when
 * it is not one, has more decimals than the currency has (trailing zeros aside), or is past the largest exact
 * integer. Zero is 0: a caller that needs a positive amount checks for it.
 */
export function decimalToMinor(amount: string, currency: string): number | null {
  const digits = minorUnitDigits(currency.toUpperCase());
  if (!isDecimalString(amount) || decimalPlaces(amount) > digits) return null;
  const [whole, fraction = ''] = amount.split('.');
  const minor = BigInt(whole!) * 10n ** BigInt(digits) + BigInt(fraction.padEnd(digits, '0').slice(0, digits) || '0');
  return minor <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(minor) : null;
}

/** Integer minor units written as a decimal with the currency's decimals: 25000 usd is "250.00", 500 jpy "500". */
export function minorToDecimal(amount: number, currency: string): string {
  if (!Number.isSafeInteger(amount)) throw new RangeError(`not a whole number of minor units: ${amount}`);
  const digits = minorUnitDigits(currency.toUpperCase());
  const sign = amount < 0 ? '-' : '';
  const text = String(Math.abs(amount)).padStart(digits + 1, '0');
  return digits === 0 ? sign + text : `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/** x / d rounded half to even (banker's rounding: 2.5 → 2, 3.5 → 4), for a non-negative integer x and d > 0. */
export function divideHalfEven(x: number, d: number): number {
  const q = Math.floor(x / d);
  const r = x - q * d;
  if (2 * r > d || (2 * r === d && q % 2 === 1)) return q + 1;
  return q;
}

/**
 * A signed decimal sum as Postgres gives NUMERIC ("-12.5000", "418.05", "0") written with the currency's decimals
 * ("-12.50", "418.05", "0.00"), exactly, by digits; more decimals than the currency has are rounded half to even,
 * the one rounding rule. For totals shown back (analytics), which may be negative where refunds exceed sales.
 */
export function sumInCurrency(amount: string, currency: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(amount);
  if (!match) throw new Error(`not a decimal: ${JSON.stringify(amount)}`);
  const [, sign, whole, fraction = ''] = match;
  const digits = minorUnitDigits(currency);
  const scaled = BigInt(whole! + fraction.padEnd(digits, '0'));
  const extra = Math.max(0, fraction.length - digits);
  let minor = scaled / 10n ** BigInt(extra);
  if (extra > 0) {
    const rest = scaled % 10n ** BigInt(extra);
    const half = 5n * 10n ** BigInt(extra - 1);
    if (rest > half || (rest === half && minor % 2n === 1n)) minor += 1n;
  }
  const text = minor.toString().padStart(digits + 1, '0');
  const body = digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`;
  return minor === 0n ? body : sign + body;
}
