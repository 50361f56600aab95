import { startReceiver } from '../helpers/receiver.ts';
import {
  createDashboardUser,
  dashboardMerchant,
  sessionRequest,
  signInHttp,
  startDashboardPlatform,
} from '../helpers/dashboard.ts';
import { eventually, type Platform, type TestLike } from '../helpers/platform.ts';
import { registerEndpoint } from '../helpers/webhooks.ts';

/**
 * The programme page's tests: the platform with a dispatcher (webhooks, and mails into the development mailbox),
 * trusting X-Forwarded-For from loopback so that one test process can be many applicants' addresses.
 */
export async function startProgrammePlatform(t: TestLike, opts: { analytics?: boolean } = {}) {
  const { platform } = await startDashboardPlatform(t, {
    // The dashboard's Overview reads the analytics (events, commissions): the browser test signs in to it.
    services: opts.analytics ? ['events', 'commissions', 'dispatcher'] : ['dispatcher'],
    env: { TRUST_PROXY: 'loopback' },
  });
  return platform;
}

let nextIp = 1;
/** A client address of its own for each call (the page limits applications per address). */
export const freshIp = () => `198.51.100.${nextIp++}`;

/** A merchant with a signed-in owner, and its programme page set up with `page`. */
export async function programmeMerchant(platform: Platform, page: Record<string, unknown>, name?: string) {
  const m = await dashboardMerchant(platform);
  if (name) await platform.sql`update merchants set name = ${name} where id = ${m.id}`;
  const session = await signInHttp(platform.baseUrl, m.email);
  const dash = (method: string, path: string, body?: unknown) =>
    sessionRequest(platform.baseUrl, session, method, path, body);
  const set = await dash('PATCH', '/dashboard/api/programme', page);
  if (set.status !== 200) throw new Error(`programme page not set up: ${set.status} ${set.text}`);
  return { ...m, session, dash, page: set.body as { slug: string; page_url: string; commission_terms: string[] } };
}

/** A viewer or developer of the merchant, signed in. */
export async function teamMember(platform: Platform, merchantId: string, role: 'viewer' | 'developer' | 'admin') {
  const email = `${role}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  await createDashboardUser(platform.sql, merchantId, email);
  await platform.sql`update dashboard_users set role = ${role} where email = ${email}`;
  const session = await signInHttp(platform.baseUrl, email);
  return (method: string, path: string, body?: unknown) =>
    sessionRequest(platform.baseUrl, session, method, path, body);
}

export const application = (email: string, over: Record<string, string> = {}) => ({
  name: 'Jane Applicant',
  email,
  website: 'https://jane.example.com',
  promotion: 'A weekly newsletter about hiking',
  terms: 'accepted',
  ...over,
});

/** POST /p/{slug} as the page's form sends it. */
export async function apply(platform: Platform, slug: string, fields: Record<string, string>, ip = freshIp()) {
  const res = await fetch(`${platform.baseUrl}/p/${slug}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

export interface DevMail {
  id: string;
  to: string;
  subject: string;
  text: string;
  links: string[];
}

/** The development mailbox's mails to `to`, once there are at least `count`. */
export async function mailsTo(platform: Platform, to: string, count = 1): Promise<DevMail[]> {
  return eventually(
    async () => {
      const res = await fetch(`${platform.baseUrl}/dev/mailbox`);
      const mails = ((await res.json()) as { mails: DevMail[] }).mails.filter((m) => m.to === to);
      return mails.length >= count ? mails : undefined;
    },
    10_000,
    `${count} mails to ${to}`,
  );
}

/** A receiver of the merchant's affiliate webhooks. */
export async function affiliateWebhooks(t: TestLike, platform: Platform, merchantId: string) {
  const receiver = await startReceiver(t);
  await registerEndpoint(platform, merchantId, {
    url: receiver.url,
    event_types: ['affiliate.created', 'affiliate.approved'],
  });
  return receiver;
}
