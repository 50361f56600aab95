import { loadEventsConfig } from '@platform/events/config';
import { startEventsService } from '@platform/events/service';
import type { CommissionsService } from '@platform/commissions/service';
import { startCommissions, testClock } from '../helpers/commissions.ts';
import { waitForMails, mailsTo, type MailboxMail } from '../helpers/invitations.ts';
import { captureLogger, startPlatform, type Platform, type TestLike } from '../helpers/platform.ts';
import { startDispatcher } from '../helpers/webhooks.ts';

/**
 * The portal backend's tests (sign-in, sessions, /portal/api): the platform with the events and commissions services,
 * affiliates made through the API, and the portal used over HTTP as its pages use it (the cookie, the CSRF header).
 */
export async function startPortalPlatform(
  t: TestLike,
  opts: { commissions?: boolean } = {},
): Promise<{ platform: Platform; commissions?: CommissionsService }> {
  const platform = await startPlatform(t, { env: { LOG_LEVEL: 'info', PUBLIC_BASE_URL: 'https://portal.test' } });
  const events = await startEventsService(loadEventsConfig({ ...platform.env }), captureLogger('events').log);
  t.teardown(() => events.close());
  // The dispatcher delivers the mails into the development mailbox the tests read.
  await startDispatcher(t, platform);
  if (!opts.commissions) return { platform };
  const { service } = await startCommissions(t, platform, { now: testClock().now });
  return { platform, commissions: service };
}

export type Merchant = Awaited<ReturnType<Platform['merchant']>>;

let counter = 0;
/** An approved affiliate of `m` with this address (a fresh one unless told). */
export async function approvedAffiliate(m: Merchant, email = `aff${++counter}-${Date.now()}@example.com`) {
  const res = await m.client.post('/api/v1/affiliates', { email, display_name: `Affiliate ${counter}` });
  if (res.status !== 201) throw new Error(`create affiliate: ${res.status} ${res.text}`);
  return res.body as { id: string; email: string; slug: string; referral_url: string; status: string };
}

/** The link of the newest mail to `to` that has one under /portal/link/, and the mail. */
export async function newestPortalLink(
  baseUrl: string,
  to: string,
  count = 1,
): Promise<{ url: string; mail: MailboxMail }> {
  const [mail] = await waitForMails(baseUrl, to, count);
  const url = mail!.links.find((l) => new URL(l).pathname.startsWith('/portal/link/'));
  if (!url) throw new Error(`the mail "${mail!.subject}" has no portal link`);
  return { url, mail: mail! };
}

export const mailCount = async (baseUrl: string, to: string) => (await mailsTo(baseUrl, to)).length;

/**
 * Opens a link's path on the test's gateway (the mailed URL's host is PUBLIC_BASE_URL's) without following
 * redirects, as a browser does: a mailed link first shows a page with a Continue button, which posts from this site.
 */
export async function openLink(baseUrl: string, url: string) {
  const path = baseUrl + new URL(url).pathname;
  let res = await fetch(path, { redirect: 'manual' });
  if (res.status === 200 && (await res.clone().text()).includes('<form method="post">'))
    res = await fetch(path, { method: 'POST', redirect: 'manual', headers: { 'sec-fetch-site': 'same-origin' } });
  const setCookie = res.headers.get('set-cookie') ?? '';
  return {
    status: res.status,
    location: res.headers.get('location'),
    setCookie,
    cookie: /portal_session=([^;]+)/.exec(setCookie)?.[1],
    headers: res.headers,
    text: await res.text(),
  };
}

export interface PortalSession {
  cookie: string;
  csrf: string;
}

/** A request as the portal's pages make it: the cookie, and the CSRF header unless `csrf` is false. */
export async function portal(
  baseUrl: string,
  session: Partial<PortalSession> | null,
  method: string,
  path: string,
  body?: unknown,
  opts: { csrf?: boolean; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...opts.headers };
  if (session?.cookie) headers['cookie'] = `portal_session=${session.cookie}`;
  if (opts.csrf !== false && session?.csrf) headers['x-portal-csrf'] = session.csrf;
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    redirect: 'manual',
  });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, body: json, text, headers: res.headers };
}

/** The session a link opens: its cookie and, from GET /portal/api/session, its CSRF token. */
export async function sessionOf(baseUrl: string, url: string): Promise<PortalSession & { session: any }> {
  const opened = await openLink(baseUrl, url);
  if (opened.status !== 303 || !opened.cookie) throw new Error(`link: ${opened.status} ${opened.text.slice(0, 200)}`);
  const res = await portal(baseUrl, { cookie: opened.cookie }, 'GET', '/portal/api/session');
  if (res.status !== 200) throw new Error(`session: ${res.status} ${res.text}`);
  return { cookie: opened.cookie, csrf: res.body.csrf_token, session: res.body };
}

/** Signs in by e-mail as the portal's sign-in page does: asks for the link, opens the mailed one. */
export async function signIn(baseUrl: string, email: string) {
  const before = await mailCount(baseUrl, email);
  const asked = await portal(baseUrl, null, 'POST', '/portal/api/sign-in', { email });
  if (asked.status !== 202) throw new Error(`sign-in: ${asked.status} ${asked.text}`);
  const { url } = await newestPortalLink(baseUrl, email, before + 1);
  return sessionOf(baseUrl, url);
}

/** An embedded session made by the merchant's API; answers the API's answer. */
export const createPortalSession = (m: Merchant, affiliateId: string, body: Record<string, unknown> = {}) =>
  m.client.post(`/api/v1/affiliates/${affiliateId}/portal_sessions`, body);
