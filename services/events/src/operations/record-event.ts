import { api } from '@platform/shared/api';
import { decimalString, isCirculatingCurrency } from '@platform/shared/currencies';
import { ApiError, type ErrorDetail } from '@platform/shared/errors';
import { newId } from '@platform/shared/ids';
import { decimalPlaces, minorUnitDigits } from '@platform/shared/money';
import { defineOperation } from '@platform/shared/operation';
import { outboxCommitted } from '@platform/shared/outbox';
import { EVENT_PAYLOAD_MAX_BYTES, type RecordEventBody } from '@platform/shared/schemas/events-api';
import { settingsAndAttribution } from '../attribution.ts';
import { hashBody } from '../body-hash.ts';
import { conversionVisit, presentEvent } from '../present.ts';
import { findEventByKey, insertEventWithOutbox } from '../queries/conversion-events.ts';

/**
 * POST /api/v1/events. The event and its `conversion.recorded` outbox row are written in one statement, so the
 * commissions service hears of every stored event exactly once and of nothing that was rolled back. Idempotent on
 * (merchant, event_type, external_id): INSERT … ON CONFLICT DO NOTHING lets one of any number of concurrent
 * requests insert; the others compare their body's hash with the stored one.
 */
export const recordEventOperation = () =>
  defineOperation(api.recordEvent, async (ctx, { body }) => {
    // Settings, the cookie's visit and the coupon's owner in one read; reads need no transaction of their own.
    const found = await settingsAndAttribution(ctx.sql, ctx.merchantId, body.cookie_id, body.coupon);
    if (!found) throw new Error('the merchant of an authenticated key has no row');
    const { settings, attribution } = found;
    const { amount, currency } = checkEvent(body, settings.currency);
    const bodyHash = hashBody(body);
    const payload = body.payload ?? {};
    const customerEmail = payload['customer_email'];

    // The event and its conversion.recorded row in one statement: atomic, one round trip, no BEGIN/COMMIT.
    const inserted = await insertEventWithOutbox(ctx.sql, {
      id: newId('evt'),
      merchantId: ctx.merchantId,
      eventType: body.event_type,
      externalId: body.external_id,
      cookieId: body.cookie_id ?? null,
      coupon: body.coupon ?? null,
      amount,
      currency,
      payload,
      affiliateId: attribution.affiliateId,
      attributedBy: attribution.by,
      visitId: attribution.visit?.id ?? null,
      bodyHash,
      messageId: newId('msg'),
      visit: conversionVisit(attribution.visit),
      customerEmail: typeof customerEmail === 'string' ? customerEmail : null,
    });
    if (inserted) {
      outboxCommitted(ctx.sql);
      ctx.log.info('conversion event recorded', { event_id: inserted.id, attributed_by: inserted.attributed_by, affiliate_id: inserted.affiliate_id });
      return { outcome: 'created', body: presentEvent(inserted) };
    }

    const row = await findEventByKey(ctx.sql, ctx.merchantId, body.event_type, body.external_id);
    if (!row) throw new Error('conversion event vanished between conflict and read');
    if (!row.body_hash.equals(bodyHash)) {
      throw new ApiError('CONFLICT', 'An event with this event_type and external_id was recorded with a different body', [
        { path: 'external_id', message: 'was already used for this event_type with a different body' },
      ]);
    }
    return { outcome: 'ok', body: presentEvent(row) };
  });

/**
 * The rules a schema cannot say: cookie_id or coupon, a currency in circulation, no more decimals than it has,
 * a bounded payload. Every problem is reported at once. Answers the amount as exact decimal text and the currency.
 */
function checkEvent(body: RecordEventBody, defaultCurrency: string): { amount: string; currency: string } {
  const problems: ErrorDetail[] = [];
  if (body.cookie_id === undefined && body.coupon === undefined) {
    problems.push({ path: 'cookie_id', message: 'cookie_id or coupon is required' });
  }
  const currency = body.currency ?? defaultCurrency;
  const known = isCirculatingCurrency(currency);
  if (!known) {
    problems.push({
      path: 'currency',
      message: body.currency !== undefined ? 'is not an ISO 4217 currency in circulation' : `is required: the default currency ${currency} is not supported`,
    });
  }
  // The JSON number's shortest decimal form is what the sender wrote (less trailing zeros): count its decimals.
  const amount = decimalString(body.amount ?? 0);
  if (known) {
    const allowed = minorUnitDigits(currency);
    if (decimalPlaces(amount) > allowed) {
      problems.push({
        path: 'amount',
        message: allowed === 0 ? `must be a whole number in ${currency}` : `must have at most ${allowed} decimal places in ${currency}`,
      });
    }
  }
  if (body.payload !== undefined && Buffer.byteLength(JSON.stringify(body.payload), 'utf8') > EVENT_PAYLOAD_MAX_BYTES) {
    problems.push({ path: 'payload', message: `must be at most ${EVENT_PAYLOAD_MAX_BYTES / 1024} KiB as JSON` });
  }
  if (problems.length > 0) throw new ApiError('INVALID_INPUT', 'The request is invalid', problems);
  return { amount, currency };
}
