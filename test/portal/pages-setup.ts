import type { Page } from 'playwright-core';
import { loadEventsConfig } from '@platform/events/config';
import { startEventsService } from '@platform/events/service';
import { startCommissions } from '../helpers/commissions.ts';
import { captureLogger, startPlatform, type Platform, type TestLike } from '../helpers/platform.ts';
import { startDispatcher } from '../helpers/webhooks.ts';
import { createAffiliate, setSettings } from '../events/setup.ts';

/**
 * The portal pages' browser tests: the platform with the events service (clicks, conversions), the commissions
 * service (its handle kept, to approve held commissions) and the mail dispatcher (the development mailbox), a merchant
 * paying a tenth of each sale with no hold, and the affiliate's sign-in through the mailed link. Nothing here imports
 * tap: bench/portal-pages.ts runs on it too.
 */
export async function startPortalPlatform(t: TestLike) {
  const platform = await startPlatform(t, { env: { LOG_LEVEL: 'info' } });
  const events = await startEventsService(loadEventsConfig({ ...platform.env }), captureLogger('events').log);
  t.teardown(() => events.close());
  await startDispatcher(t, platform);
  const { service } = await startCommissions(t, platform);
  return { platform, commissions: service };
}

export async function portalMerchant(platform: Platform) {
  const m = await platform.merchant();
  await setSettings(platform.sql, m.id, {
    default_rate: 0.1,
    hold_days: 0,
    currency: 'USD',
    landing_url: 'https://shop.example.com/',
  });
  return m;
}

/** An approved affiliate of the merchant `client` answers for. */
export async function approvedAffiliate(
  client: Parameters<typeof createAffiliate>[0],
  email: string,
  extra: Record<string, unknown> = {},
) {
  const a = await createAffiliate(client, email, extra);
  const got = await client.get(`/api/v1/affiliates/${a.id}`);
  if (got.body.status !== 'approved') {
    const res = await client.patch(`/api/v1/affiliates/${a.id}`, { status: 'approved' });
    if (res.status !== 200) throw new Error(`approving ${email}: ${res.status} ${res.text}`);
  }
  return a;
}

interface Mail {
  to: string;
  subject: string;
  links: string[];
}

/** The development mailbox's mails to `to`, newest first (helpers/invitations.ts has the same, but imports tap). */
export async function mailsTo(baseUrl: string, to: string): Promise<Mail[]> {
  const { mails } = (await (await fetch(`${baseUrl}/dev/mailbox`)).json()) as { mails: Mail[] };
  return mails.filter((m) => m.to.toLowerCase() === to.toLowerCase());
}

/** Waits until `to` has `count` mails (10 s at most); answers them, newest first. */
async function waitForMails(baseUrl: string, to: string, count: number): Promise<Mail[]> {
  for (let i = 0; i < 200; i++) {
    const mails = await mailsTo(baseUrl, to);
    if (mails.length >= count) return mails;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no ${count} mail(s) to ${to} in the development mailbox`);
}

/** The path (and query) of the newest mail's link to `to` whose subject fits, once `count` mails have come. */
export async function mailedLink(baseUrl: string, to: string, subject: RegExp, count = 1): Promise<string> {
  const mails = (await waitForMails(baseUrl, to, count)).filter((m) => subject.test(m.subject));
  const link = mails[0]?.links.find((l) => new URL(l).pathname.startsWith('/portal/link/'));
  if (!link) throw new Error(`no portal link mailed to ${to} (${subject})`);
  // The link is on PUBLIC_BASE_URL; this gateway listens on a port of its own.
  const url = new URL(link);
  return url.pathname + url.search;
}

/** Opens a mailed link as its reader does: the link's page, then its Continue button (what uses the link). */
export async function openMailedLink(page: Page, baseUrl: string, link: string): Promise<void> {
  await page.goto(`${baseUrl}${link}`);
  await page.getByRole('button', { name: 'Continue' }).click();
}

/** Signs in as `email` through the sign-in page and the mailed link; waits for Home. */
export async function signInPortal(page: Page, baseUrl: string, email: string, mailsBefore = 0): Promise<void> {
  await page.goto(`${baseUrl}/portal/sign-in`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
  await page.getByRole('heading', { level: 1, name: 'Check your e-mail' }).waitFor();
  await openMailedLink(page, baseUrl, await mailedLink(baseUrl, email, /sign-in link/, mailsBefore + 1));
  await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
}

/** Waits until no section of the page says it is loading. */
export async function loaded(page: Page): Promise<void> {
  const loading = page.getByRole('status').filter({ hasText: /^Loading/ });
  for (let waited = 0; (await loading.count()) > 0; waited += 100) {
    if (waited > 15_000) throw new Error('still loading after 15 s');
    await page.waitForTimeout(100);
  }
}
