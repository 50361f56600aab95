/** What the events operations need from configuration. */
export interface EventsDeps {
  /** Signs list cursors. */
  cursorKey: Buffer;
  /** Keys the HMAC that replaces a visitor's IP address before anything is stored. */
  ipHashKey: Buffer;
  /** VISIT_RETENTION_DAYS: clicks older than this are gone, whether or not the purge has deleted them yet. */
  visitRetentionDays: number;
}
