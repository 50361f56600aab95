/** What the affiliates operations need from configuration. */
export interface AffiliatesDeps {
  publicBaseUrl: string;
  /** Signs list cursors. */
  cursorKey: Buffer;
  /** ENCRYPTION_KEY, then ENCRYPTION_KEYS_PREVIOUS: the vault encrypts under the first and decrypts with any. */
  vaultKeys: Buffer[];
}
