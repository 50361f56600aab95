import { composeMail, type MailContent } from '@platform/shared/mail';

/**
 * The portal's mails, plain text and HTML, with absolute links made from PUBLIC_BASE_URL (never from the request's
 * Host, which a client chooses). The links are single use and expire in 15 minutes (shared/src/portal-links.ts).
 */
interface Mail {
  subject: string;
  content: MailContent;
}

export function signInMail(url: string, programmes: string[]): Mail {
  const which =
    programmes.length > 1
      ? `You are an affiliate of ${programmes.length} programmes (${programmes.join(', ')}); the portal lets you switch between them.`
      : `You are an affiliate of ${programmes[0] ?? 'a programme'}.`;
  return {
    subject: 'Your sign-in link to the affiliate portal',
    content: composeMail(
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
    content: composeMail(
      [
        `Open the link below within 15 minutes to change how ${merchantName} pays you. It works once, and lets you change your payout details for 15 minutes.`,
        'If you did not ask for it, ignore this mail: nothing changes without the link.',
      ],
      { url, label: 'Change my payout details' },
    ),
  };
}
