import type { MailContent } from '@platform/shared/mail';
import { linkMail } from '../dashboard/signup-mails.ts';

/**
 * The portal's mails, plain text and HTML, with absolute links made from PUBLIC_BASE_URL (never from the request's
 * Host, which a client chooses). The links are single use and expire in 15 minutes (shared/src/portal-links.ts).
 */
interface Mail {
  subject: string;
  content: MailContent;
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function signInMail(url: string, programmes: string[]): Mail {
  const which =
    programmes.length > 1
      ? `You are an affiliate of ${programmes.length} programmes (${programmes.join(', ')}); the portal lets you switch between them.`
      : `You are an affiliate of ${programmes[0] ?? 'a programme'}.`;
  return {
    subject: 'Your sign-in link to the affiliate portal',
    content: linkMail(
      [
        'Open the link below within 15 minutes to sign in to the affiliate portal. It works once.',
        which,
        'If you did not ask for it, ignore this mail: nobody can sign in without the link.',
      ],
      { url, label: 'Sign in to the affiliate portal' },
    ),
  };
}

export function payoutDetailsLinkMail(url: string, merchantName: string): Mail {
  return {
    subject: `Change your payout details for ${merchantName}`,
    content: linkMail(
      [
        `Open the link below within 15 minutes to change how ${merchantName} pays you. It works once, and lets you change your payout details for 15 minutes.`,
        'If you did not ask for it, ignore this mail: nothing changes without the link.',
      ],
      { url, label: 'Change my payout details' },
    ),
  };
}

/** After a change: what is on file now (masked), so that a change the affiliate did not make is noticed. */
export function payoutDetailsChangedMail(portalUrl: string, merchantName: string, masked: string): Mail {
  const text =
    [
      `Your payout details for ${merchantName} were changed. They are now: ${masked}.`,
      `If you did not change them, contact ${merchantName} at once. See them in the portal: ${portalUrl}`,
    ].join('\n\n') + '\n';
  const html =
    `<!doctype html><html><body style="font-family: sans-serif; line-height: 1.5">` +
    `<p>Your payout details for ${escape(merchantName)} were changed. They are now: ${escape(masked)}.</p>` +
    `<p>If you did not change them, contact ${escape(merchantName)} at once.</p>` +
    `<p><a href="${escape(portalUrl)}">See them in the portal</a></p></body></html>`;
  return {
    subject: `Your payout details for ${merchantName} were changed`,
    content: { text, html, links: [portalUrl] },
  };
}
