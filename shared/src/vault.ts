import { createHash } from 'node:crypto';
import { createHmacKey, decryptSecretWithAny, encryptSecret, secretPlace, UndecryptableSecret } from './crypto.ts';
import type { Queryable } from './db.ts';
import { newId } from './ids.ts';

export type VaultKind = 'tin' | 'foreign_tin' | 'payout_details';

/**
 * The id a vault row keeps of the key it is encrypted under: a hash of a key derived for this purpose only, so the
 * id tells keys apart and reveals nothing of them. After ENCRYPTION_KEY changes, rows whose key_id is not the
 * current key's are the ones still under a key of ENCRYPTION_KEYS_PREVIOUS.
 */
export function vaultKeyId(master: Buffer): string {
  return createHash('sha256').update(createHmacKey(master, 'vault-key-id')).digest('hex').slice(0, 16);
}

/**
 * The last four characters of a secret, the rest starred: what may be shown of it anywhere. A value of fewer than
 * eight characters shows only its last half, so that no short secret (a four-digit account number) is shown whole.
 */
export function maskLastFour(value: string): string {
  const tail = value.slice(value.length - Math.min(4, Math.floor(value.length / 2)));
  return `${'*'.repeat(Math.max(1, Math.min(value.length - tail.length, 5)))}${tail}`;
}

/**
 * Stores a secret encrypted (AES-256-GCM under the current key, keys[0], bound to its row and merchant: a ciphertext
 * copied to another row does not decrypt) with what may be shown of it, in the caller's transaction; answers the
 * vault id that the referencing row keeps.
 */
export async function storeSecret(
  tx: Queryable,
  keys: readonly Buffer[],
  s: { merchantId: string; affiliateId: string; kind: VaultKind; plaintext: string; masked: Record<string, unknown> },
): Promise<string> {
  const id = newId('vlt');
  const current = keys[0]!;
  const ciphertext = encryptSecret(current, s.plaintext, secretPlace('vault', id, s.merchantId));
  await tx`
    insert into vault_secrets (id, merchant_id, affiliate_id, kind, key_id, ciphertext, masked)
    values (${id}, ${s.merchantId}, ${s.affiliateId}, ${s.kind}, ${vaultKeyId(current)},
            ${ciphertext}, ${tx.json(s.masked as never)})`;
  return id;
}

/**
 * The plaintext of a vault row of the merchant, decrypted with the key its key_id names (one of ENCRYPTION_KEY and
 * ENCRYPTION_KEYS_PREVIOUS); undefined when there is no such row. Throws UndecryptableSecret, which names no secret,
 * when none of the keys is the row's.
 */
export async function readSecret(
  sql: Queryable,
  keys: readonly Buffer[],
  merchantId: string,
  vaultId: string,
): Promise<string | undefined> {
  const [row] = await sql<{ key_id: string; ciphertext: string }[]>`
    select key_id, ciphertext from vault_secrets where merchant_id = ${merchantId} and id = ${vaultId}`;
  if (!row) return undefined;
  const key = keys.find((k) => vaultKeyId(k) === row.key_id);
  if (!key) throw new UndecryptableSecret();
  return decryptSecretWithAny([key], row.ciphertext, secretPlace('vault', vaultId, merchantId)).plaintext;
}
