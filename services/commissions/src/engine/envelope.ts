import { Value } from '@sinclair/typebox/value';
import { ConversionRecordedSchema, type ConversionRecorded, type DomainEvent } from '@platform/shared/catalogue';
import { isCurrencyCode, isDecimalString } from '@platform/shared/money';
import { decodeJson } from '@platform/shared/nats';

export type ConversionEnvelope = DomainEvent<ConversionRecorded, 'conversion.recorded'>;

/** A message that can never be processed, however often it is delivered: it is terminated, not retried. */
export class PoisonMessage extends Error {
  override name = 'PoisonMessage';
}

/** Decodes and checks a `conversion.recorded` envelope; throws PoisonMessage naming what is wrong (never the content). */
export function parseConversionEnvelope(bytes: Uint8Array): ConversionEnvelope {
  let value: unknown;
  try {
    value = decodeJson<unknown>(bytes);
  } catch {
    throw new PoisonMessage('not JSON');
  }
  const e = value as Partial<ConversionEnvelope> | null;
  if (!e || typeof e !== 'object') throw new PoisonMessage('not an envelope');
  if (e.type !== 'conversion.recorded') throw new PoisonMessage('type is not conversion.recorded');
  if (typeof e.id !== 'string' || typeof e.merchant_id !== 'string' || typeof e.created_at !== 'string') {
    throw new PoisonMessage('envelope lacks id, merchant_id or created_at');
  }
  if (!Value.Check(ConversionRecordedSchema, e.data)) {
    const first = Value.Errors(ConversionRecordedSchema, e.data).First();
    throw new PoisonMessage(`data does not match conversion.recorded${first ? ` at ${first.path || '/'}` : ''}`);
  }
  const data = e.data;
  if (!isDecimalString(data.amount)) throw new PoisonMessage('data.amount is not a non-negative decimal');
  if (!isCurrencyCode(data.currency)) throw new PoisonMessage('data.currency is not an ISO 4217 code');
  if (Number.isNaN(Date.parse(data.created_at))) throw new PoisonMessage('data.created_at is not a timestamp');
  return e as ConversionEnvelope;
}
