import { composeMail } from '@platform/shared/mail';
import { INVITATION_DAYS } from './queries/invitations.ts';

/**
 * The invitation's mail. Its link is made from PUBLIC_BASE_URL, never from the request's Host (signup-mails.ts says
 * why). The inviter's address and the merchant's name are the only words in it that a person typed.
 */
export function invitationMail(
  baseUrl: string,
  invite: { company: string; invitedBy: string; role: string; token: string },
) {
  const url = `${baseUrl}/dashboard/accept?token=${invite.token}`;
  return {
    subject: `You are invited to ${invite.company}’s affiliate dashboard`,
    content: composeMail(
      [
        `${invite.invitedBy} invited you to join ${invite.company} on its affiliate dashboard as ${invite.role}. Open the link below within ${INVITATION_DAYS} days to choose a password; it works once.`,
        'If you did not expect this invitation, ignore this mail: nothing happens without the link.',
      ],
      { url, label: 'Accept the invitation' },
    ),
  };
}
