/**
 * CSV files made in the browser from what a page shows, free of the DOM (a test runs them under Node). RFC 4180:
 * CRLF line ends, a field quoted when it holds a comma, a quote or a line break, its quotes doubled. Text that a
 * spreadsheet would run as a formula (starting with =, +, -, @, a tab or a carriage return, or such a character after
 * a semicolon or a tab: a landing page or a referrer is the visitor's to choose) gets an apostrophe in front of it;
 * numbers, negative ones included (revenue net of refunds), are written as they are.
 */
export type CsvValue = string | number | null;

const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;

export function csvField(value: CsvValue): string {
  if (value === null) return '';
  const text = String(value);
  if (typeof value !== 'string' || NUMBER.test(text)) return text;
  // Where a spreadsheet splits cells on semicolons or tabs (its locale's separator), what follows one is a cell of
  // its own: an apostrophe there too, and the field quoted so that a reader splitting on commas keeps it whole.
  const safe = (/^[=+\-@\t\r]/.test(text) ? `'${text}` : text).replace(/([;\t])(?=[=+\-@])/g, "$1'");
  return /[",;\t\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The header row, then one line per row. */
export function toCsv(header: string[], rows: CsvValue[][]): string {
  return [header, ...rows].map((r) => r.map(csvField).join(',') + '\r\n').join('');
}
