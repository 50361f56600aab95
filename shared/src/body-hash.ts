import { createHash } from 'node:crypto';

/**
 * The fingerprint of a request body for idempotency: SHA-256 of its JSON with object keys sorted at every level,
 * so that the same fields in another order are the same body, and any changed value is a different one.
 */
export function hashBody(body: unknown): Buffer {
  return createHash('sha256').update(canonicalJson(body)).digest();
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}
