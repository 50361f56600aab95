import type { PayoutDetails } from '@platform/shared/payee';
import { formatAmount, toDecimal } from './money.ts';

/**
 * The CSV files of the payouts export, free of I/O. RFC 4180: CRLF line ends, fields quoted when they hold a comma,
 * a quote, a line break, a semicolon or a tab. A text field that a spreadsheet would read as a formula (starting with
 * =, +, -, @, a tab or a carriage return, or with such a character after a semicolon or a tab) gets an apostrophe in
 * front of it, so opening the file runs nothing.
 */

export interface ExportedPayout {
  id: string;
  affiliate_id: string;
  display_name: string;
  amount: string;
  currency: string;
  period_start: Date;
  period_end: Date;
  details: PayoutDetails | null;
}

/** The payouts that have a row in the file of the layout: those whose affiliate is paid that way. */
export function exportedIds(payouts: ExportedPayout[], layout: 'paypal' | 'bank'): string[] {
  return payouts.filter((p) => p.details?.method === layout).map((p) => p.id);
}

export function csvField(value: string): string {
  // Where a spreadsheet splits cells on semicolons or tabs (its locale's separator), what follows one is a cell of
  // its own: a formula there is defused too (an affiliate's name is the affiliate's to choose), and the field quoted.
  const safe = (/^[=+\-@\t\r]/.test(value) ? `'${value}` : value).replace(/([;\t])(?=[=+\-@])/g, "$1'");
  return /[",;\t\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

const line = (fields: string[]) => fields.map(csvField).join(',') + '\r\n';

const day = (d: Date) => d.toISOString().slice(0, 10);

/** The note each row carries: the span of the commissions the payout groups. */
const payoutNote = (p: ExportedPayout) => `Commissions ${day(p.period_start)} to ${day(p.period_end)}`;

/**
 * The PayPal Payouts batch file (Payouts Web upload): no header; recipient e-mail, amount, currency, customer id
 * (the payout id, at most 30 characters), note to recipient, recipient wallet. Only payouts whose affiliate is paid
 * through PayPal have a row.
 */
export function paypalCsv(payouts: ExportedPayout[]): string {
  let out = '';
  for (const p of payouts) {
    if (p.details?.method !== 'paypal') continue;
    out += line([
      p.details.paypal_email,
      formatAmount(toDecimal(p.amount), p.currency),
      p.currency,
      p.id,
      payoutNote(p),
      'PAYPAL',
    ]);
  }
  return out;
}

const BANK_CSV_HEADER = [
  'payout_id',
  'affiliate_id',
  'account_holder',
  'iban',
  'routing_number',
  'account_number',
  'amount',
  'currency',
  'reference',
] as const;

/**
 * Bank transfers: a header row, then one row per payout whose affiliate is paid by bank transfer, with an IBAN or a
 * US routing and account number (the other columns empty). The reference is the payout id, for reconciliation.
 */
export function bankCsv(payouts: ExportedPayout[]): string {
  let out = line([...BANK_CSV_HEADER]);
  for (const p of payouts) {
    if (p.details?.method !== 'bank') continue;
    const d = p.details;
    out += line([
      p.id,
      p.affiliate_id,
      p.display_name,
      'iban' in d ? d.iban : '',
      'routing_number' in d ? d.routing_number : '',
      'account_number' in d ? d.account_number : '',
      formatAmount(toDecimal(p.amount), p.currency),
      p.currency,
      p.id,
    ]);
  }
  return out;
}
