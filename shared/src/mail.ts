import { decryptSecretWithAny, encryptSecret, secretPlace } from './crypto.ts';
import type { Queryable } from './db.ts';
import { newId } from './ids.ts';

/**
 * Outgoing e-mail (migration 042). A mail is a row of `mails` written in the transaction of the change that causes
 * it, so that it is sent if and only if the change commits; the dispatcher sends it (services/dispatcher/src/mailer.ts)
 * over SMTP, or outside production without SMTP_URL into the development mailbox that the gateway shows at
 * GET /dev/mailbox. The body is encrypted at rest: a link in it (a verification link) is a credential until used.
 */

/** The channel a commit NOTIFYs so that the dispatcher sends at once rather than at its next poll. */
export const MAIL_NOTIFY_CHANNEL = 'mail_pending';

export type MailKind =
  | 'verify_email'
  | 'already_registered'
  | 'password_reset'
  | 'team_invitation'
  | 'billing'
  // The affiliate portal's (docs/PORTAL.md).
  | 'affiliate_sign_in'
  | 'application_received'
  | 'application_approved'
  | 'application_rejected'
  | 'payout_details_link'
  | 'payout_details_changed';

/** What a mail says: a plain-text and an HTML part, and the links in them (listed by the development mailbox). */
export interface MailContent {
  text: string;
  html: string;
  links: string[];
}

export interface NewMail {
  merchantId: string;
  kind: MailKind;
  to: string;
  subject: string;
  content: MailContent;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A mail of a few paragraphs, with at most one link (after the first paragraph), in plain text and HTML: every mail
 * of the platform is made by it, so each has its plain-text part and escapes what it quotes.
 */
export function composeMail(paragraphs: string[], link?: { url: string; label: string }): MailContent {
  const text = [...paragraphs.slice(0, 1), ...(link ? [link.url] : []), ...paragraphs.slice(1)].join('\n\n') + '\n';
  const html =
    `<!doctype html><html><body style="font-family: sans-serif; line-height: 1.5">` +
    `<p>${escapeHtml(paragraphs[0]!)}</p>` +
    (link ? `<p><a href="${escapeHtml(link.url)}">${escapeHtml(link.label)}</a></p>` : '') +
    paragraphs
      .slice(1)
      .map((p) => `<p>${escapeHtml(p)}</p>`)
      .join('') +
    `</body></html>`;
  return { text, html, links: link ? [link.url] : [] };
}

export const mailPlace = (id: string, merchantId: string) => secretPlace('mail', id, merchantId);

/** Records a mail to send in the caller's transaction; answers its id. */
export async function enqueueMail(tx: Queryable, masterKey: Buffer, mail: NewMail): Promise<string> {
  const id = newId('mail');
  const content = encryptSecret(masterKey, JSON.stringify(mail.content), mailPlace(id, mail.merchantId));
  await tx`
    insert into mails (id, merchant_id, kind, recipient, subject, content_encrypted)
    values (${id}, ${mail.merchantId}, ${mail.kind}, ${mail.to}, ${mail.subject}, ${content})`;
  // Sign-ups are a person's clicks, not a hot path: the NOTIFY's serialised commit costs nothing here (outbox.ts).
  await tx`select pg_notify(${MAIL_NOTIFY_CHANNEL}, '')`;
  return id;
}

/** A stored mail's content, decrypted with the first of `keys` that opens it. */
export function openMailContent(keys: readonly Buffer[], row: { id: string; merchant_id: string; content: string }) {
  const { plaintext } = decryptSecretWithAny(keys, row.content, mailPlace(row.id, row.merchant_id));
  return JSON.parse(plaintext) as MailContent;
}
