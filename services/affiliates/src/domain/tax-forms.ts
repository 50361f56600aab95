import type { ErrorDetail } from '@platform/shared/errors';
import type { PayoutDetails, PayoutDetailsBody, TaxFormBody } from '@platform/shared/schemas/tax-forms';
import { isCountryCode } from './countries.ts';

/**
 * The domain rules of tax forms and payout details, as pure functions: each problem names the field's path as the
 * API reports it. No message repeats the value it refuses (a TIN or an account number must never reach a log line or
 * an error body).
 */

// IRS: the EIN prefixes never assigned to a campus or for internet applications.
const UNASSIGNED_EIN_PREFIXES = new Set([
  '00',
  '07',
  '08',
  '09',
  '17',
  '18',
  '19',
  '28',
  '29',
  '49',
  '69',
  '70',
  '78',
  '79',
  '89',
  '96',
  '97',
]);

/** The nine digits of an SSN (123-45-6789 or nine digits), or the reason it cannot be one. */
export function ssnDigits(tin: string): { digits: string } | { problem: string } {
  if (!/^(\d{3}-\d{2}-\d{4}|\d{9})$/.test(tin)) return { problem: 'must be an SSN: 123-45-6789 or nine digits' };
  const digits = tin.replaceAll('-', '');
  const area = digits.slice(0, 3);
  if (area === '000' || area === '666' || area >= '900') return { problem: 'is not a valid SSN (area number)' };
  if (digits.slice(3, 5) === '00') return { problem: 'is not a valid SSN (group number 00)' };
  if (digits.slice(5) === '0000') return { problem: 'is not a valid SSN (serial number 0000)' };
  return { digits };
}

/** The nine digits of an EIN (12-3456789 or nine digits), or the reason it cannot be one. */
export function einDigits(tin: string): { digits: string } | { problem: string } {
  if (!/^(\d{2}-\d{7}|\d{9})$/.test(tin)) return { problem: 'must be an EIN: 12-3456789 or nine digits' };
  const digits = tin.replaceAll('-', '');
  if (UNASSIGNED_EIN_PREFIXES.has(digits.slice(0, 2))) return { problem: 'is not a valid EIN (prefix)' };
  return { digits };
}

/** An IBAN without spaces, upper case, when its shape and mod-97 checksum (ISO 13616) hold. */
export function normalizeIban(iban: string): string | null {
  const compact = iban.replaceAll(' ', '').toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(compact) || !isCountryCode(compact.slice(0, 2))) return null;
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged) {
    const value = ch >= 'A' ? String(ch.charCodeAt(0) - 55) : ch;
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1 ? compact : null;
}

/** A US ABA routing number: nine digits whose weighted sum (3, 7, 1) is a multiple of ten. */
export function isAbaRoutingNumber(routing: string): boolean {
  if (!/^\d{9}$/.test(routing)) return false;
  const d = [...routing].map(Number);
  const sum = 3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!);
  return sum % 10 === 0;
}

/** The calendar day (UTC) of `now`, as YYYY-MM-DD. */
const dayOf = (now: Date) => now.toISOString().slice(0, 10);

/**
 * When a form signed on that day stops being valid: a W-8 at the end of the third calendar year after signing
 * (signed in 2026: valid through 31 December 2029); a W-9 does not expire (null).
 */
export function taxFormExpiry(formType: TaxFormBody['form_type'], signedOn: string): Date | null {
  if (formType === 'W-9') return null;
  const year = Number(signedOn.slice(0, 4)) + 3;
  return new Date(Date.UTC(year, 11, 31, 23, 59, 59, 999));
}

/** What a valid form's TIN is: digits for a W-9, the foreign TIN of a W-8 (or none). */
export interface CheckedTaxForm {
  tin: { type: 'ssn' | 'ein' | 'foreign'; value: string } | null;
  country: string;
}

/** The problems of a tax form (already shaped by its schema), or what is to be stored of its TIN. */
export function checkTaxForm(form: TaxFormBody, now: Date): { problems: ErrorDetail[] } | CheckedTaxForm {
  const problems: ErrorDetail[] = [];
  const countryField = (path: string, code: string | undefined) => {
    if (code !== undefined && !isCountryCode(code))
      problems.push({ path, message: 'is not an ISO 3166-1 alpha-2 country code' });
  };
  if (!/^\d{4}-\d{2}-\d{2}$/.test(form.signed_on) || Number.isNaN(Date.parse(form.signed_on)))
    problems.push({ path: 'signed_on', message: 'must be a date (YYYY-MM-DD)' });
  else if (form.signed_on > dayOf(now)) problems.push({ path: 'signed_on', message: 'must not be in the future' });
  countryField('address.country', form.address.country);
  let tin: CheckedTaxForm['tin'] = null;
  if (form.form_type === 'W-9') {
    const checked = form.tin_type === 'ssn' ? ssnDigits(form.tin) : einDigits(form.tin);
    if ('problem' in checked) problems.push({ path: 'tin', message: checked.problem });
    else tin = { type: form.tin_type, value: checked.digits };
  } else {
    if (form.form_type === 'W-8BEN') countryField('citizenship_country', form.citizenship_country);
    else countryField('incorporation_country', form.incorporation_country);
    countryField('treaty_country', form.treaty_country);
    const foreignTin = form.foreign_tin?.trim();
    if (form.foreign_tin !== undefined && !foreignTin)
      problems.push({ path: 'foreign_tin', message: 'must not be blank' });
    else if (foreignTin && form.foreign_tin_not_required_reason !== undefined)
      problems.push({ path: 'foreign_tin_not_required_reason', message: 'must be left out when foreign_tin is given' });
    else if (!foreignTin && form.foreign_tin_not_required_reason === undefined)
      problems.push({ path: 'foreign_tin', message: 'is required unless foreign_tin_not_required_reason is given' });
    if (foreignTin) tin = { type: 'foreign', value: foreignTin };
  }
  return problems.length > 0 ? { problems } : { tin, country: form.address.country };
}

/** Payout details in the form they are kept, or their problems. */
export function checkPayoutDetails(body: PayoutDetailsBody): { problems: ErrorDetail[] } | { details: PayoutDetails } {
  if (body.method === 'paypal') return { details: { method: 'paypal', paypal_email: body.paypal_email } };
  const { iban, routing_number: routing, account_number: account } = body;
  if (iban !== undefined) {
    if (routing !== undefined || account !== undefined)
      return {
        problems: [{ path: 'iban', message: 'give either iban or routing_number and account_number, not both' }],
      };
    const normalized = normalizeIban(iban);
    if (!normalized) return { problems: [{ path: 'iban', message: 'is not a valid IBAN (shape or checksum)' }] };
    return { details: { method: 'bank', iban: normalized } };
  }
  const problems: ErrorDetail[] = [];
  if (routing === undefined && account === undefined)
    return { problems: [{ path: 'iban', message: 'is required unless routing_number and account_number are given' }] };
  if (routing === undefined) problems.push({ path: 'routing_number', message: 'is required with account_number' });
  else if (!isAbaRoutingNumber(routing))
    problems.push({ path: 'routing_number', message: 'is not a valid ABA routing number (nine digits, checksum)' });
  if (account === undefined) problems.push({ path: 'account_number', message: 'is required with routing_number' });
  else if (!/^\d{4,17}$/.test(account)) problems.push({ path: 'account_number', message: 'must be 4 to 17 digits' });
  if (problems.length > 0) return { problems };
  return { details: { method: 'bank', routing_number: routing!, account_number: account! } };
}
