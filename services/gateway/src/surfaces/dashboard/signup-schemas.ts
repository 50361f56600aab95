import { Type } from '@sinclair/typebox';

/** Payloads of sign-up and e-mail verification (routes-signup.ts), one schema each. */

export const SignUpBody = Type.Object(
  {
    company_name: Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '\\S',
      description: 'the merchant’s name, as the dashboard shows it',
      examples: ['Acme Outdoor'],
    }),
    email: Type.String({
      minLength: 3,
      maxLength: 320,
      pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$',
      description: 'the owner’s e-mail: the verification link goes there, and it signs in with it',
      examples: ['owner@example.com'],
    }),
    password: Type.String({
      minLength: 10,
      maxLength: 1024,
      description: 'the owner’s password, at least 10 characters',
    }),
  },
  { additionalProperties: false, $id: 'DashboardSignUp' },
);

export const SignUpAnswer = Type.Object(
  {
    email: Type.String({ description: 'where the mail went' }),
    status: Type.Literal('verification_sent', {
      description:
        'the same for a new address and one already registered (which is told so by mail): the answer never says which',
    }),
  },
  { additionalProperties: false, $id: 'DashboardSignUpAnswer' },
);

export const VerifyEmailBody = Type.Object(
  {
    token: Type.String({
      pattern: '^[A-Za-z0-9_-]{43}$',
      description: 'the `token` of the verification link (/dashboard/verify?token=…)',
    }),
  },
  { additionalProperties: false, $id: 'DashboardVerifyEmail' },
);
