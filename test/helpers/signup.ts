import { linksOf, type ReceivedMail } from './smtp.ts';

/** A sign-up's form. */
export const signUpBody = (email: string, over: Record<string, unknown> = {}) => ({
  company_name: 'Acme Outdoor',
  email,
  password: 'a long enough password',
  ...over,
});

/** POST /dashboard/api/signup as the sign-up page sends it (no session, no CSRF token). */
export async function signUpHttp(baseUrl: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${baseUrl}/dashboard/api/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

/** POST /dashboard/api/verify: the status, and the session cookie it set. */
export async function verifyHttp(baseUrl: string, token: string) {
  const res = await fetch(`${baseUrl}/dashboard/api/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? JSON.parse(text) : undefined,
    cookie: /dash_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1],
  };
}

/** The verification token of a mail (its link's `token`), or undefined. */
export function tokenOf(mail: ReceivedMail): string | undefined {
  const link = linksOf(mail.raw).find((l) => l.includes('/dashboard/verify?token='));
  return link ? new URL(link).searchParams.get('token')! : undefined;
}

/** The mails of `received` to `to`. */
export const mailsTo = (received: ReceivedMail[], to: string) =>
  received.filter((m) => m.to.some((a) => a.toLowerCase() === to.toLowerCase()));
