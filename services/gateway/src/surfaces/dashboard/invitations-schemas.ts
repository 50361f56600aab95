import { Type } from '@sinclair/typebox';
import { Timestamp } from '@platform/shared/schemas/common';
import { RoleSchema } from './schemas.ts';

/** Payloads of invitations and the ownership transfer (routes-invitations.ts, routes-team.ts), one schema each. */

export const Invitation = Type.Object(
  {
    id: Type.String(),
    email: Type.String({ description: 'the address invited: the member signs in with it' }),
    role: RoleSchema,
    invited_by: Type.String({ description: 'the e-mail of the member who invited' }),
    created_at: Timestamp('when the invitation was made'),
    sent_at: Timestamp('when its link was last mailed'),
    expires_at: Timestamp('when its link stops working (7 days after it was last mailed)'),
    expired: Type.Boolean({ description: 'the link is past its 7 days: resend it for a new one' }),
  },
  { additionalProperties: false, $id: 'DashboardInvitation' },
);

export const InvitationList = Type.Object(
  {
    data: Type.Array(Invitation, { description: 'the open invitations (neither accepted nor revoked), oldest first' }),
  },
  { additionalProperties: false, $id: 'DashboardInvitationList' },
);

export const CreateInvitationBody = Type.Object(
  {
    email: Type.String({
      minLength: 3,
      maxLength: 320,
      pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$',
      description: 'where the invitation goes; the new member signs in with it',
      examples: ['colleague@example.com'],
    }),
    role: Type.Optional({ ...RoleSchema, description: 'the new member’s role; viewer when left out' }),
  },
  { additionalProperties: false, $id: 'DashboardCreateInvitation' },
);

export const InvitationIdParams = Type.Object(
  { invitation_id: Type.String({ maxLength: 64 }) },
  { additionalProperties: false },
);

const LinkToken = Type.String({
  pattern: '^[A-Za-z0-9_-]{43}$',
  description: 'the `token` of the invitation’s link (/dashboard/accept?token=…)',
});

export const InvitationLinkBody = Type.Object(
  { token: LinkToken },
  { additionalProperties: false, $id: 'DashboardInvitationLink' },
);

export const InvitationPreview = Type.Object(
  {
    email: Type.String({ description: 'the address invited: the member will sign in with it' }),
    role: RoleSchema,
    company: Type.String({ description: 'the merchant the invitation is to' }),
    expires_at: Timestamp('when the link stops working'),
  },
  { additionalProperties: false, $id: 'DashboardInvitationPreview' },
);

export const AcceptInvitationBody = Type.Object(
  {
    token: LinkToken,
    password: Type.String({
      minLength: 10,
      maxLength: 1024,
      description: 'the new member’s password, at least 10 characters',
    }),
  },
  { additionalProperties: false, $id: 'DashboardAcceptInvitation' },
);
