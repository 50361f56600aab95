/**
 * The secrets that sign now: the current one, and the previous one while its grace period lasts. `decrypt` opens a
 * stored secret of the row's endpoint (decryptSecretWithAny, through the attempt engine's cache); it throws
 * UndecryptableSecret.
 */
export function signingSecrets(
  decrypt: (stored: string) => string,
  row: { secret_encrypted: string; previous_secret_encrypted: string | null; previous_secret_expires_at: Date | null },
  now = Date.now(),
): string[] {
  const secrets = [decrypt(row.secret_encrypted)];
  if (
    row.previous_secret_encrypted &&
    row.previous_secret_expires_at &&
    row.previous_secret_expires_at.getTime() > now
  ) {
    secrets.push(decrypt(row.previous_secret_encrypted));
  }
  return secrets;
}
