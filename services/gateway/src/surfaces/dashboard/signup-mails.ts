import { composeMail } from '@platform/shared/mail';
import { VERIFICATION_HOURS } from './queries/signup.ts';

/**
 * The mails of sign-up, in plain text and HTML. Links are made from PUBLIC_BASE_URL, never from the request's Host:
 * a Host a client chose would otherwise send a victim's verification link to the client's site.
 */
export function verificationMail(baseUrl: string, company: string, token: string) {
  const url = `${baseUrl}/dashboard/verify?token=${token}`;
  return {
    subject: 'Verify your e-mail address',
    content: composeMail(
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
    content: composeMail(
      [
        'Someone, perhaps you, tried to sign up with this address, which already has an account. Sign in instead:',
        'If it was not you, you can ignore this mail: no account was made and nothing changed.',
      ],
      { url, label: 'Sign in' },
    ),
  };
}
