import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

// Derived keys per master key and purpose: HKDF runs once, not on every encryption or signature.
const derived = new WeakMap<Buffer, Map<string, Buffer>>();

/** Derives a purpose-specific key from the configured master key, so one secret serves several uses safely. */
export function createHmacKey(master: Buffer, purpose: string): Buffer {
  let byPurpose = derived.get(master);
  if (!byPurpose) derived.set(master, (byPurpose = new Map<string, Buffer>()));
  let key = byPurpose.get(purpose);
  if (!key)
    byPurpose.set(
      purpose,
      (key = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `affiliate-platform:${purpose}`, 32))),
    );
  return key;
}

/** API keys carry 256 bits of randomness, so a fast hash is enough: nothing can be guessed by brute force. */
export function hashApiKey(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * What a secret at rest is for. Each purpose encrypts under a key of its own (HKDF info `secrets-at-rest:<purpose>`),
 * so a ciphertext of one purpose opens with no other's key, and a flaw in how one is handled exposes no other.
 */
export type SecretPurpose =
  'vault' | 'webhook-secret' | 'bank-account' | 'idempotency-answer' | 'idempotency-reply' | 'mail';

/**
 * The columns whose values a purpose's ciphertexts are bound to, in order: the row's identity, then what scopes it
 * to its tenant (the merchant; for the payment API's accounts, test or live mode, since their merchant is optional).
 * Their values, as text, are the AES-GCM associated data: a ciphertext moved to another row, another merchant or
 * another purpose does not decrypt.
 */
export const BOUND_COLUMNS = {
  vault: ['id', 'merchant_id'],
  'webhook-secret': ['id', 'merchant_id'],
  'bank-account': ['id', 'livemode'],
  'idempotency-answer': ['owner', 'key'],
  'idempotency-reply': ['owner', 'key'],
  mail: ['id', 'merchant_id'],
} as const satisfies Record<SecretPurpose, readonly string[]>;

type Strings<T extends readonly string[]> = { [I in keyof T]: string };

/** Where a ciphertext is stored: its purpose, and the values of its row's BOUND_COLUMNS. */
export interface SecretPlace {
  purpose: SecretPurpose;
  row: readonly string[];
}

/** The place of a value, its row's bound values given in BOUND_COLUMNS' order (a boolean as `true` / `false`). */
export function secretPlace<P extends SecretPurpose>(
  purpose: P,
  ...row: Strings<(typeof BOUND_COLUMNS)[P]>
): SecretPlace {
  return { purpose, row };
}

// Each part percent-encoded, so that no two places give the same bytes (a ':' inside an Idempotency-Key, say).
const associatedData = (place: SecretPlace) =>
  Buffer.from([place.purpose, ...place.row].map(encodeURIComponent).join(':'), 'utf8');

/**
 * AES-256-GCM under the purpose's key, bound to its place; the output is `v2:iv:tag:ciphertext` in base64url, safe
 * to store as text.
 */
export function encryptSecret(master: Buffer, plaintext: string, place: SecretPlace): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', createHmacKey(master, `secrets-at-rest:${place.purpose}`), iv);
  cipher.setAAD(associatedData(place));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [
    'v2',
    iv.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    ciphertext.toString('base64url'),
  ].join(':');
}

/**
 * An encrypted value that none of the configured keys opens: encrypted under a key this process was not given (an
 * ENCRYPTION_KEY changed without the old one in ENCRYPTION_KEYS_PREVIOUS), or damaged. Its message names no secret.
 */
export class UndecryptableSecret extends Error {
  constructor(options?: ErrorOptions) {
    super('cannot be decrypted with ENCRYPTION_KEY or any of ENCRYPTION_KEYS_PREVIOUS', options);
    this.name = 'UndecryptableSecret';
  }
}

/**
 * Decrypts with the first of `keys` (the current key, then the previous ones) that opens the value at its place;
 * `keyIndex` says which, and `current` whether it is as encryptSecret writes it now (the current key, format v2), so
 * that there is nothing to re-encrypt. A `v1` value (before keys per purpose and associated data: the one key
 * `secrets-at-rest`, bound to nothing) still decrypts, and is never current.
 */
export function decryptSecretWithAny(
  keys: readonly Buffer[],
  stored: string,
  place: SecretPlace,
): { plaintext: string; keyIndex: number; current: boolean } {
  for (let i = 0; i < keys.length; i++) {
    try {
      const { plaintext, version } = decryptSecret(keys[i]!, stored, place);
      return { plaintext, keyIndex: i, current: i === 0 && version === 'v2' };
    } catch {
      // the next key may open it
    }
  }
  throw new UndecryptableSecret();
}

function decryptSecret(master: Buffer, stored: string, place: SecretPlace): { plaintext: string; version: string } {
  const [version, iv, tag, ciphertext, extra] = stored.split(':');
  if ((version !== 'v1' && version !== 'v2') || !iv || !tag || ciphertext === undefined || extra !== undefined)
    throw new Error('unrecognised encrypted value');
  const key = createHmacKey(master, version === 'v1' ? 'secrets-at-rest' : `secrets-at-rest:${place.purpose}`);
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  if (version === 'v2') decipher.setAAD(associatedData(place));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  const plaintext = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
  return { plaintext: plaintext.toString('utf8'), version };
}
