import { ApiError, notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { enqueueMail } from '@platform/shared/mail';
import { createPortalLink, portalLinkUrl } from '@platform/shared/portal-links';
import { handle, type PortalContext } from './define.ts';
import { signInMail } from './mails.ts';
import { approvedAffiliatesOf, programmeView } from './queries/programmes.ts';
import { clearPortalCookie } from './sessions.ts';
import { portalSpecs } from './specs.ts';

/** GET /portal/api/session's answer: the person, the programme shown, and the others they may switch to. */
export async function sessionView(ctx: PortalContext) {
  const s = ctx.session;
  const p = await programmeView(ctx.sql, s.merchantId, s.affiliateId);
  if (!p) throw new ApiError('UNAUTHORIZED', 'Sign in to the affiliate portal first');
  const programmes = s.embedded ? [] : await approvedAffiliatesOf(ctx.sql, s.email);
  return {
    email: s.email,
    csrf_token: s.csrfToken,
    embedded: s.embedded,
    return_url: s.returnUrl,
    affiliate: { id: s.affiliateId, display_name: p.display_name, status: p.status },
    programme: { merchant_name: p.merchant_name, currency: p.currency, slug: p.programme_slug },
    programmes: programmes.map((x) => ({ affiliate_id: x.affiliate_id, merchant_name: x.merchant_name })),
  };
}

/** Asks for a link with the limit counted first; answers whether the caller may go on. */
export async function countLinkRequest(ctx: PortalContext, email: string): Promise<void> {
  const wait = await ctx.limiter.reserve(email, ctx.ip);
  if (wait > 0) {
    ctx.res.setHeader('Retry-After', String(wait));
    throw new ApiError('RATE_LIMITED', 'Too many links asked for; try again later');
  }
}

export const sessionRoutes = [
  /**
   * Always 202 and the same body, whether or not the address is an approved affiliate's anywhere: the answer tells
   * nobody which addresses exist. One mail, one link, whatever the number of programmes: the session it opens lists
   * them all.
   */
  handle(portalSpecs.signIn, async (ctx, { body }) => {
    const email = body.email.toLowerCase();
    await countLinkRequest(ctx, email);
    const programmes = await approvedAffiliatesOf(ctx.sql, email);
    const first = programmes[0];
    if (first) {
      await ctx.sql.begin(async (tx) => {
        const { token } = await createPortalLink(tx, {
          purpose: 'sign_in',
          email,
          merchantId: first.merchant_id,
          affiliateId: first.affiliate_id,
        });
        const mail = signInMail(
          portalLinkUrl(ctx.config.PUBLIC_BASE_URL, token),
          programmes.map((p) => p.merchant_name),
        );
        await enqueueMail(tx, ctx.masterKey, {
          merchantId: first.merchant_id,
          kind: 'affiliate_sign_in',
          to: email,
          ...mail,
        });
      });
    }
    ctx.log.info('portal sign-in link asked', { programmes: programmes.length });
    return {};
  }),
  handle(portalSpecs.getSession, (ctx) => sessionView(ctx)),
  /** Another programme of the same address; an embedded session is its one affiliate's only. */
  handle(portalSpecs.switchProgramme, async (ctx, { body }) => {
    const s = ctx.session;
    if (body.affiliate_id === s.affiliateId) return sessionView(ctx);
    if (s.embedded || !isId('aff', body.affiliate_id)) throw notFound('programme');
    const target = (await approvedAffiliatesOf(ctx.sql, s.email)).find((p) => p.affiliate_id === body.affiliate_id);
    if (!target) throw notFound('programme');
    await ctx.sessions.switchTo(ctx.token, { merchantId: target.merchant_id, affiliateId: target.affiliate_id });
    ctx.session = {
      ...s,
      merchantId: target.merchant_id,
      affiliateId: target.affiliate_id,
      payoutDetailsUntil: null,
    };
    ctx.log.info('portal programme switched', { affiliate_id: target.affiliate_id });
    return sessionView(ctx);
  }),
  handle(portalSpecs.signOut, async (ctx) => {
    await ctx.sessions.end(ctx.token);
    clearPortalCookie(ctx.res, ctx.session.embedded, ctx.secureCookies);
    return null;
  }),
];
