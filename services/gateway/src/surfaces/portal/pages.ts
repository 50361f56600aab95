import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Request, type Response } from 'express';
import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { peekPortalLink, redeemPortalLink } from '@platform/shared/portal-links';
import { escapeHtml, sendPage } from '../../http/page-shell.ts';
import { approvedAffiliatesOf, frameOriginsOf } from './queries/programmes.ts';
import { portalToken, setPortalCookie, type PortalSessionStore } from './sessions.ts';

/** The portal app's pages (H3's Preact app, built into the dashboard's dist as portal.html). */
export const PORTAL_PAGES = [
  '/portal',
  '/portal/',
  '/portal/sign-in',
  '/portal/performance',
  '/portal/commissions',
  '/portal/payouts',
  '/portal/payout-settings',
  '/portal/team',
];

/** Helmet's default policy but for frame-ancestors, which is the programme's to choose. */
const APP_POLICY = [
  "default-src 'self'",
  "base-uri 'self'",
  "font-src 'self' https: data:",
  "form-action 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' https: 'unsafe-inline'",
].join('; ');

/**
 * Who may frame an answer: the origins the signed-in programme lists (programmes.frame_origins, each checked to be
 * an origin when the merchant saved it), or nobody. X-Frame-Options cannot name an origin: it is dropped where
 * frame-ancestors allows some, and DENY elsewhere, for browsers that know only it.
 */
export function setFramePolicy(res: Response, origins: readonly string[]): void {
  const ancestors = origins.length > 0 ? origins.join(' ') : "'none'";
  res.setHeader('Content-Security-Policy', `${APP_POLICY}; frame-ancestors ${ancestors}`);
  if (origins.length > 0) res.removeHeader('X-Frame-Options');
  else res.setHeader('X-Frame-Options', 'DENY');
}

const EXPIRED_STYLE = `
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1c2330; }
  main { max-width: 36rem; margin: 3rem auto; background: #fff; padding: 2rem; border-radius: 8px; }
  h1 { font-size: 1.5rem; margin-top: 0; }
  a { color: #1d4ed8; }`;

function sendExpired(res: Response): void {
  sendPage(res, 410, {
    title: 'This link has expired',
    style: EXPIRED_STYLE,
    body:
      `<h1>This link has expired</h1>\n<p>Sign-in links work once, for a short time. ` +
      `<a href="${escapeHtml('/portal/sign-in')}">Ask for a new link</a>.</p>`,
  });
}

/**
 * A mailed link asks for a click before it signs in: mail scanners (Safe Links and the like) open every link of a
 * mail, and would otherwise use the single-use link up before the person does; and a POST from another site cannot
 * sign a victim into the sender's own account (its Origin or Sec-Fetch-Site says so, checked below).
 */
function sendContinue(res: Response, purpose: 'sign_in' | 'payout_details'): void {
  const what = purpose === 'sign_in' ? 'sign in to the affiliate portal' : 'change your payout details';
  res.setHeader('Cache-Control', 'no-store');
  sendPage(res, 200, {
    title: 'Continue to the affiliate portal',
    style: EXPIRED_STYLE,
    body:
      `<h1>Continue to the affiliate portal</h1>\n<p>Use this link to ${escapeHtml(what)}. It works once.</p>\n` +
      `<form method="post"><button type="submit">Continue</button></form>`,
  });
}

/** Whether a POST comes from a page of this site (a browser says so in Sec-Fetch-Site, or at least in Origin). */
function sameSite(req: Request): boolean {
  const site = req.get('sec-fetch-site');
  if (site) return site === 'same-origin';
  const origin = req.get('origin');
  return origin !== undefined && origin !== 'null' && new URL(origin).host === req.get('host');
}

export function portalPages(deps: {
  sql: Sql;
  log: Logger;
  sessions: PortalSessionStore;
  dir: string | null;
  secureCookies: boolean;
}): express.Router {
  const { sql, log, sessions } = deps;
  const router = express.Router();
  const html = deps.dir ? join(deps.dir, 'portal.html') : null;

  router.get(PORTAL_PAGES, async (req: Request, res: Response) => {
    res.locals['route'] = 'portal.page';
    const token = portalToken(req);
    const session = token ? await sessions.resolve(token) : null;
    setFramePolicy(res, session ? await frameOriginsOf(sql, session.merchantId) : []);
    res.setHeader('Cache-Control', 'no-cache');
    if (!html || !existsSync(html))
      return void res.status(503).type('text/plain').send('The portal is not built: run npm run build first.\n');
    res.sendFile(html);
  });

  /**
   * A link works once (one conditional UPDATE claims it). It opens a session for the link's affiliate while that one
   * is still approved with the link's address; a sign-in link whose affiliate no longer is opens the address's first
   * approved programme instead. A session this browser had is ended: one person, one session here.
   */
  router.get('/portal/link/:token', async (req: Request, res: Response) => {
    res.locals['route'] = 'portal.link';
    const purpose = await peekPortalLink(sql, req.params['token'] as string);
    if (!purpose) return sendExpired(res);
    // An embed link is made by the merchant's server for its own page, used at once and never mailed: it opens on GET.
    if (purpose !== 'embed') return sendContinue(res, purpose);
    await open(req, res);
  });

  router.post('/portal/link/:token', async (req: Request, res: Response) => {
    res.locals['route'] = 'portal.link';
    if (!sameSite(req)) {
      // Another site's form: nothing is used; the person may still continue from this site's own page.
      const purpose = await peekPortalLink(sql, req.params['token'] as string);
      return purpose && purpose !== 'embed' ? sendContinue(res, purpose) : sendExpired(res);
    }
    await open(req, res);
  });

  async function open(req: Request, res: Response): Promise<void> {
    const link = await redeemPortalLink(sql, req.params['token'] as string);
    if (!link) return void sendExpired(res);
    const approved = await approvedAffiliatesOf(sql, link.email);
    let target = approved.find((a) => a.affiliate_id === link.affiliateId && a.merchant_id === link.merchantId);
    if (!target && link.purpose === 'sign_in') target = approved[0];
    if (!target) return void sendExpired(res);
    const embedded = link.purpose === 'embed';
    const before = portalToken(req);
    if (before) await sessions.end(before);
    const { token, expiresAt } = await sessions.create({
      email: link.email,
      merchantId: target.merchant_id,
      affiliateId: target.affiliate_id,
      embedded,
      returnUrl: link.returnUrl,
      payoutDetails: link.purpose === 'payout_details',
    });
    setPortalCookie(res, token, expiresAt, embedded, deps.secureCookies);
    // The redirect is framed too when the merchant embeds the link.
    setFramePolicy(res, await frameOriginsOf(sql, target.merchant_id));
    res.setHeader('Cache-Control', 'no-store');
    log.info('portal session opened', { affiliate_id: target.affiliate_id, purpose: link.purpose });
    res.redirect(303, link.purpose === 'payout_details' ? '/portal/payout-settings' : '/portal/');
  }

  return router;
}
