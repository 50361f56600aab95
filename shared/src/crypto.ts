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

/** AES-256-GCM; the output is version:iv:tag:ciphertext in base64url, safe to store as text. */
export function encryptSecret(master: Buffer, plaintext: string): string {
  const key = createHmacKey(master, 'secrets-at-rest');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [
    'v1',
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
  constructor() {
    super('cannot be decrypted with ENCRYPTION_KEY or any of ENCRYPTION_KEYS_PREVIOUS');
    this.name = 'UndecryptableSecret';
  }
}

/**
 * Decrypts with the first of `keys` (the current key, then the previous ones) that opens the value; `keyIndex` says
 * which (0: the current key, so nothing to re-encrypt).
 */
export function decryptSecretWithAny(keys: readonly Buffer[], stored: string): { plaintext: string; keyIndex: number } {
  for (let i = 0; i < keys.length; i++) {
    try {
      return { plaintext: decryptSecret(keys[i]!, stored), keyIndex: i };
    } catch {
      // the next key may open it
    }
  }
  throw new UndecryptableSecret();
}

function decryptSecret(master: Buffer, stored: string): string {
  const [version, iv, tag, ciphertext] = stored.split(':');
  if (version !== 'v1' || !iv || !tag || ciphertext === undefined) throw new Error('unrecognised encrypted value');
  const key = createHmacKey(master, 'secrets-at-rest');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}
