import { Type } from '@sinclair/typebox';
import { spec } from './define.ts';
import {
  AcceptInvitationBody,
  CreateInvitationBody,
  Invitation,
  InvitationIdParams,
  InvitationLinkBody,
  InvitationList,
  InvitationPreview,
} from './invitations-schemas.ts';
import { DashboardUser, UserIdParams } from './schemas.ts';

const noBody = { status: 204 as const, schema: Type.Null({ description: 'no body' }) };

/** Settings → Team: invitations and the ownership transfer (routes-invitations.ts, routes-team.ts), in specs.ts. */
export const invitationSpecs = {
  listInvitations: spec({
    operationId: 'listInvitations',
    permission: 'team',
    method: 'get',
    path: '/dashboard/api/invitations',
    summary: 'The merchant’s open invitations: neither accepted nor revoked (expired ones too, to resend)',
    success: { status: 200, schema: InvitationList, description: 'the invitations' },
  }),
  createInvitation: spec({
    operationId: 'createInvitation',
    permission: 'team',
    method: 'post',
    path: '/dashboard/api/invitations',
    summary:
      'Invite an address with a role (viewer unless given): a mail with a link for 7 days, single use; only an owner invites an owner',
    body: CreateInvitationBody,
    success: { status: 201, schema: Invitation, description: 'the invitation, its mail on its way' },
  }),
  resendInvitation: spec({
    operationId: 'resendInvitation',
    permission: 'team',
    method: 'post',
    path: '/dashboard/api/invitations/{invitation_id}/resend',
    summary: 'Mail the invitation again with a new link for 7 days; the link mailed before stops working',
    params: InvitationIdParams,
    success: { status: 200, schema: Invitation, description: 'the invitation' },
  }),
  revokeInvitation: spec({
    operationId: 'revokeInvitation',
    permission: 'team',
    method: 'delete',
    path: '/dashboard/api/invitations/{invitation_id}',
    summary: 'Revoke an invitation: its link stops working',
    params: InvitationIdParams,
    success: { ...noBody, description: 'revoked' },
  }),
  previewInvitation: spec({
    operationId: 'previewInvitation',
    permission: null,
    method: 'post',
    path: '/dashboard/api/invitations/preview',
    summary:
      'What an invitation’s link is for (the address, the role, the merchant), shown before the password; a used, revoked or expired link is refused as accepting it would be',
    auth: 'none',
    body: InvitationLinkBody,
    success: { status: 200, schema: InvitationPreview, description: 'the invitation' },
  }),
  acceptInvitation: spec({
    operationId: 'acceptInvitation',
    permission: null,
    method: 'post',
    path: '/dashboard/api/invitations/accept',
    summary:
      'Accept an invitation with the token of its link and a password: the member is made with the invited role and address (verified), and signed in',
    auth: 'none',
    body: AcceptInvitationBody,
    success: { ...noBody, description: 'the member exists and is signed in (the session cookie is set)' },
  }),
  transferOwnership: spec({
    operationId: 'transferOwnership',
    permission: 'team',
    method: 'post',
    path: '/dashboard/api/users/{user_id}/transfer_ownership',
    summary: 'Make another member the owner; the owner making it becomes admin (owners only)',
    params: UserIdParams,
    success: { status: 200, schema: DashboardUser, description: 'the new owner' },
  }),
};
