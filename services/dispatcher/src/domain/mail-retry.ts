/**
 * When a mail that could not be sent is tried again: 5 s after the first failure, doubling, at most an hour apart,
 * and for ever (a mail is never dropped because the SMTP server was down); `null` when the server refused it for
 * good (a 5xx answer: no such mailbox, a sender it will not take), which no retry changes.
 */
export function mailRetryMs(attempts: number, smtpResponseCode: number | undefined): number | null {
  if (smtpResponseCode !== undefined && smtpResponseCode >= 500 && smtpResponseCode < 600) return null;
  return Math.min(5_000 * 2 ** Math.max(attempts - 1, 0), 3_600_000);
}
