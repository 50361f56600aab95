import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * A value as encryptSecret wrote it before format v2 (`v1`): AES-256-GCM under the one key derived for every
 * purpose ('secrets-at-rest'), bound to nothing. What databases written by earlier releases hold.
 */
export function encryptV1(master: Buffer, plaintext: string): string {
  const key = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'affiliate-platform:secrets-at-rest', 32));
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), ciphertext]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join(':');
}
