import type { MailContent } from '@platform/shared/mail';
import { VERIFICATION_HOURS } from './queries/signup.ts';

/**
 * The mails of sign-up, in plain text and HTML. Links are made from PUBLIC_BASE_URL, never from the request's Host:
 * a Host a client chose would otherwise send a victim's verification link to the client's site.
 */
const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A mail of a few paragraphs with one link after the first, in plain text and HTML. */
export function linkMail(paragraphs: string[], link: { url: string; label: string }): MailContent {
  const text = [...paragraphs.slice(0, 1), link.url, ...paragraphs.slice(1)].join('\n\n') + '\n';
  const html =
    `<!doctype html><html><body style="font-family: sans-serif; line-height: 1.5">` +
    `<p>${escape(paragraphs[0]!)}</p>` +
    `<p><a href="${escape(link.url)}">${escape(link.label)}</a></p>` +
    paragraphs
      .slice(1)
      .map((p) => `<p>${escape(p)}</p>`)
      .join('') +
    `</body></html>`;
  return { text, html, links: [link.url] };
}

export function verificationMail(baseUrl: string, company: string, token: string) {
  const url = `${baseUrl}/dashboard/verify?token=${token}`;
  return {
    subject: 'Verify your e-mail address',
    content: linkMail(
      [
        `Welcome! To finish setting up ${company}, verify this address within ${VERIFICATION_HOURS} hours by opening the link below; it signs you in.`,
        'If you did not sign up, ignore this mail: nothing happens without the link.',
      ],
      { url, label: 'Verify my e-mail address' },
    ),
  };
}

export function alreadyRegisteredMail(baseUrl: string) {
  const url = `${baseUrl}/dashboard`;
  return {
    subject: 'You already have an account',
    content: linkMail(
      [
        'Someone, perhaps you, tried to sign up with this address, which already has an account. Sign in instead:',
        'If it was not you, you can ignore this mail: no account was made and nothing changed.',
      ],
      { url, label: 'Sign in' },
    ),
  };
}
