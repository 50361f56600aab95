import type { DomainEvent, OutboxEventType } from './catalogue.ts';
import { decodeJson } from './nats.ts';

/** A message that can never be processed, however often it is delivered: it is terminated, not retried. */
export class PoisonMessage extends Error {
  override name = 'PoisonMessage';
}

/**
 * The envelope of a message of the domain-event or conversion streams, as every consumer reads it: JSON with an id,
 * one of `types`, a merchant, a timestamp and a data object. Throws PoisonMessage naming what is wrong, never the
 * content (which may hold customer data). What the data must hold is the consumer's to check.
 */
export function parseEnvelope<T extends OutboxEventType>(
  bytes: Uint8Array,
  types: readonly T[],
): DomainEvent<Record<string, unknown>, T> {
  let value: unknown;
  try {
    value = decodeJson<unknown>(bytes);
  } catch {
    // No cause: the parser's message quotes the content, which may hold customer data.
    // eslint-disable-next-line preserve-caught-error
    throw new PoisonMessage('not JSON');
  }
  const e = value as Partial<DomainEvent<Record<string, unknown>, T>> | null;
  if (!e || typeof e !== 'object') throw new PoisonMessage('not an envelope');
  if (!types.includes(e.type as T))
    throw new PoisonMessage(types.length === 1 ? `type is not ${types[0]}` : 'type is not one this stream carries');
  if (typeof e.id !== 'string' || typeof e.merchant_id !== 'string' || typeof e.created_at !== 'string') {
    throw new PoisonMessage('envelope lacks id, merchant_id or created_at');
  }
  if (Number.isNaN(Date.parse(e.created_at))) throw new PoisonMessage('created_at is not a timestamp');
  if (typeof e.data !== 'object' || e.data === null) throw new PoisonMessage('data is not an object');
  return e as DomainEvent<Record<string, unknown>, T>;
}
