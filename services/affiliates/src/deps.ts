/** What the affiliates operations need from configuration. */
export interface AffiliatesDeps {
  publicBaseUrl: string;
  /** Signs list cursors. */
  cursorKey: Buffer;
}
