import { Type } from '@sinclair/typebox';
import { spec } from './define.ts';

/** Payloads and routes of "Forgot password?" (routes-password-reset.ts), spread into dashboardSpecs (specs.ts). */
const ResetRequestBody = Type.Object(
  {
    email: Type.String({
      minLength: 3,
      maxLength: 320,
      description: 'the dashboard user’s e-mail: the reset link goes there if it has an account',
      examples: ['owner@example.com'],
    }),
  },
  { additionalProperties: false, $id: 'DashboardPasswordResetRequest' },
);
const ResetRequestAnswer = Type.Object(
  {
    status: Type.Literal('reset_sent', {
      description: 'the same whether or not the address has an account: the answer never says which',
    }),
  },
  { additionalProperties: false, $id: 'DashboardPasswordResetAnswer' },
);
const ResetBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 128, description: 'the token of the mailed link' }),
    password: Type.String({ minLength: 10, maxLength: 1024, description: 'the new password, at least 10 characters' }),
  },
  { additionalProperties: false, $id: 'DashboardPasswordReset' },
);

export const passwordResetSpecs = {
  requestPasswordReset: spec({
    operationId: 'requestPasswordReset',
    permission: null,
    method: 'post',
    path: '/dashboard/api/password_reset',
    summary:
      'Mail a reset link (30 minutes, single use) to a dashboard user; the answer is the same for an address without an account',
    auth: 'none',
    body: ResetRequestBody,
    success: {
      status: 200,
      schema: ResetRequestAnswer,
      description: 'the mail is on its way, if the address has an account',
    },
  }),
  resetPassword: spec({
    operationId: 'resetPassword',
    permission: null,
    method: 'post',
    path: '/dashboard/api/password_reset/confirm',
    summary:
      'Set a new password with the token of a reset link: every session of the user ends, and this request signs them in',
    auth: 'none',
    body: ResetBody,
    success: { status: 204, schema: Type.Null({ description: 'no body' }), description: 'reset and signed in' },
  }),
};
