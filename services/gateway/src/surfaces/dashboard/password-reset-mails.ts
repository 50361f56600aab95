import { composeMail } from '@platform/shared/mail';
import { RESET_MINUTES } from './queries/password-reset.ts';

/** The mail of "Forgot password?", its link made from PUBLIC_BASE_URL (never the request's Host). */
export function resetMail(baseUrl: string, token: string) {
  const url = `${baseUrl}/dashboard/reset?token=${token}`;
  return {
    subject: 'Reset your password',
    content: composeMail(
      [
        `To choose a new password, open the link below within ${RESET_MINUTES} minutes. It works once, and signs you out everywhere else.`,
        'If you did not ask for this, ignore this mail: your password stays as it is.',
      ],
      { url, label: 'Choose a new password' },
    ),
  };
}
