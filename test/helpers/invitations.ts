import { sessionRequest } from './dashboard.ts';

/**
 * Invitations as the dashboard and the invited person use them over HTTP, and their mails as the development
 * mailbox (GET /dev/mailbox) shows them: the dispatcher delivers there when no SMTP_URL is set.
 */
export interface MailboxMail {
  to: string;
  subject: string;
  text: string;
  links: string[];
}

/** The development mailbox's mails to `to`, newest first. */
export async function mailsTo(baseUrl: string, to: string): Promise<MailboxMail[]> {
  const { mails } = (await (await fetch(`${baseUrl}/dev/mailbox`)).json()) as { mails: MailboxMail[] };
  return mails.filter((m) => m.to.toLowerCase() === to.toLowerCase());
}

/** Waits until `to` has `count` mails (10 s at most); answers them, newest first. */
export async function waitForMails(baseUrl: string, to: string, count = 1): Promise<MailboxMail[]> {
  for (let i = 0; i < 200; i++) {
    const mails = await mailsTo(baseUrl, to);
    if (mails.length >= count) return mails;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no ${count} mail(s) to ${to} in the development mailbox`);
}

/** The token of an invitation mail's link (/dashboard/accept?token=…). */
export function invitationToken(mail: MailboxMail): string {
  const link = mail.links.find((l) => new URL(l).pathname === '/dashboard/accept');
  if (!link) throw new Error(`the mail "${mail.subject}" has no invitation link`);
  return new URL(link).searchParams.get('token')!;
}

/** POST /dashboard/api/invitations/accept as the accept page sends it: the status, the body, the session cookie. */
export async function acceptHttp(baseUrl: string, token: string, password = 'a long enough password', extra = {}) {
  const res = await fetch(`${baseUrl}/dashboard/api/invitations/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, password, ...extra }),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? JSON.parse(text) : undefined,
    cookie: /dash_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1],
  };
}

/** Invites `email` as `role` with the session `by`; answers the invitation and the token of the link mailed. */
export async function invite(
  baseUrl: string,
  by: { cookie?: string | undefined; csrf?: string | undefined },
  email: string,
  role = 'viewer',
) {
  const before = (await mailsTo(baseUrl, email)).length;
  const res = await sessionRequest(baseUrl, by, 'POST', '/dashboard/api/invitations', { email, role });
  if (res.status !== 201) throw new Error(`invite ${email}: ${res.status} ${res.text}`);
  const [mail] = await waitForMails(baseUrl, email, before + 1);
  return {
    invitation: res.body as { id: string; email: string; role: string },
    token: invitationToken(mail!),
    mail: mail!,
  };
}
