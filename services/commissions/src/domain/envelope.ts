import { Value } from '@sinclair/typebox/value';
import { ConversionRecordedSchema, type ConversionRecorded, type DomainEvent } from '@platform/shared/catalogue';
import { isCurrencyCode, isDecimalString } from '@platform/shared/money';
import { parseEnvelope, PoisonMessage } from '@platform/shared/envelope';

export type ConversionEnvelope = DomainEvent<ConversionRecorded, 'conversion.recorded'>;
const CONVERSION_RECORDED = ['conversion.recorded'] as const;

/** Decodes and checks a `conversion.recorded` envelope; throws PoisonMessage naming what is wrong (never the content). */
export function parseConversionEnvelope(bytes: Uint8Array): ConversionEnvelope {
  const { data, ...envelope } = parseEnvelope(bytes, CONVERSION_RECORDED);
  if (!Value.Check(ConversionRecordedSchema, data)) {
    const first = Value.Errors(ConversionRecordedSchema, data).First();
    throw new PoisonMessage(`data does not match conversion.recorded${first ? ` at ${first.path || '/'}` : ''}`);
  }
  if (!isDecimalString(data.amount)) throw new PoisonMessage('data.amount is not a non-negative decimal');
  if (!isCurrencyCode(data.currency)) throw new PoisonMessage('data.currency is not an ISO 4217 code');
  if (Number.isNaN(Date.parse(data.created_at))) throw new PoisonMessage('data.created_at is not a timestamp');
  return { ...envelope, data };
}
