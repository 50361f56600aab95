import { decimalString, isCirculatingCurrency } from '@platform/shared/currencies';
import { ApiError, type ErrorDetail } from '@platform/shared/errors';
import { decimalPlaces, minorUnitDigits } from '@platform/shared/money';
import { EVENT_PAYLOAD_MAX_BYTES, type RecordEventBody } from '@platform/shared/schemas/events-api';

/**
 * The rules a schema cannot say: cookie_id or coupon (except on a refund, which names its order by external_id and
 * is attributed through it: a merchant's refund handler rarely has either), a currency in circulation, no more
 * decimals than it has, a bounded payload. Every problem is reported at once. Answers the amount as exact decimal
 * text and the currency.
 */
export function checkEvent(body: RecordEventBody, defaultCurrency: string): { amount: string; currency: string } {
  const problems: ErrorDetail[] = [];
  if (body.cookie_id === undefined && body.coupon === undefined && body.event_type !== 'refund') {
    problems.push({ path: 'cookie_id', message: 'cookie_id or coupon is required' });
  }
  const currency = body.currency ?? defaultCurrency;
  const known = isCirculatingCurrency(currency);
  if (!known) {
    problems.push({
      path: 'currency',
      message:
        body.currency !== undefined
          ? 'is not an ISO 4217 currency in circulation'
          : `is required: the default currency ${currency} is not supported`,
    });
  }
  // The JSON number's shortest decimal form is what the sender wrote (less trailing zeros): count its decimals.
  const amount = decimalString(body.amount ?? 0);
  if (known) {
    const allowed = minorUnitDigits(currency);
    if (decimalPlaces(amount) > allowed) {
      problems.push({
        path: 'amount',
        message:
          allowed === 0
            ? `must be a whole number in ${currency}`
            : `must have at most ${allowed} decimal places in ${currency}`,
      });
    }
  }
  if (body.payload !== undefined && Buffer.byteLength(JSON.stringify(body.payload), 'utf8') > EVENT_PAYLOAD_MAX_BYTES) {
    problems.push({ path: 'payload', message: `must be at most ${EVENT_PAYLOAD_MAX_BYTES / 1024} KiB as JSON` });
  }
  if (problems.length > 0) throw new ApiError('INVALID_INPUT', 'The request is invalid', problems);
  return { amount, currency };
}
