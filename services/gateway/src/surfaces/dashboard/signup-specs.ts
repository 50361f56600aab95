import { Type } from '@sinclair/typebox';
import { spec } from './define.ts';
import { SignUpAnswer, SignUpBody, VerifyEmailBody } from './signup-schemas.ts';

/** Sign-up and e-mail verification (routes-signup.ts), spread into dashboardSpecs (specs.ts). */
export const signupSpecs = {
  signUp: spec({
    operationId: 'signUp',
    permission: null,
    method: 'post',
    path: '/dashboard/api/signup',
    summary:
      'Create a merchant on the Free plan and its owner, and mail the owner a verification link (24 hours, single use); an address already registered gets the same answer and a mail saying so',
    auth: 'none',
    body: SignUpBody,
    success: { status: 200, schema: SignUpAnswer, description: 'the mail is on its way' },
  }),
  verifyEmail: spec({
    operationId: 'verifyEmail',
    permission: null,
    method: 'post',
    path: '/dashboard/api/verify',
    summary: 'Verify the owner’s address with the token of its link, and sign the owner in (sets the session cookie)',
    auth: 'none',
    body: VerifyEmailBody,
    success: { status: 204, schema: Type.Null({ description: 'no body' }), description: 'verified and signed in' },
  }),
};
