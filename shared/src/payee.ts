import type { Queryable } from './db.ts';
import type { PayoutDetails } from './schemas/tax-forms.ts';
import { readSecret } from './vault.ts';

export type { PayoutDetails } from './schemas/tax-forms.ts';

/**
 * What the payouts need to know of an affiliate as a payee, for any service that reads the shared database: whether a
 * tax form is in force, and the payout details in clear (for the merchant's payment export only: never logged,
 * returned by the API or put in an event).
 */

/** True when the affiliate of the merchant has a tax form in force (not superseded, not expired). */
export async function hasValidTaxForm(sql: Queryable, merchantId: string, affiliateId: string): Promise<boolean> {
  const [row] = await sql`
    select 1 from tax_forms
    where merchant_id = ${merchantId} and affiliate_id = ${affiliateId}
      and superseded_at is null and (expires_at is null or expires_at > now())`;
  return row !== undefined;
}

/**
 * The affiliate's payout details decrypted, or null when none are set. `keys` are ENCRYPTION_KEY then
 * ENCRYPTION_KEYS_PREVIOUS (config.ts decryptionKeys).
 */
export async function readPayoutDetails(
  sql: Queryable,
  keys: readonly Buffer[],
  merchantId: string,
  affiliateId: string,
): Promise<PayoutDetails | null> {
  const [row] = await sql<{ payout_details_vault_id: string | null }[]>`
    select payout_details_vault_id from affiliates where merchant_id = ${merchantId} and id = ${affiliateId}`;
  if (!row?.payout_details_vault_id) return null;
  const plaintext = await readSecret(sql, keys, merchantId, row.payout_details_vault_id);
  return plaintext === undefined ? null : (JSON.parse(plaintext) as PayoutDetails);
}
