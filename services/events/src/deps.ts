/** What the events operations need from configuration. */
export interface EventsDeps {
  /** Signs list cursors. */
  cursorKey: Buffer;
  /** Keys the HMAC that replaces a visitor's IP address before anything is stored. */
  ipHashKey: Buffer;
}
