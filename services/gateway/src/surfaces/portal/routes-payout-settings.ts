import { api } from '@platform/shared/api';
import { ApiError } from '@platform/shared/errors';
import { enqueueMail } from '@platform/shared/mail';
import { createPortalLink, portalLinkUrl } from '@platform/shared/portal-links';
import type { MaskedPayoutDetails, TaxForm } from '@platform/shared/schemas/tax-forms';
import { handle, type PortalContext } from './define.ts';
import { payoutDetailsLinkMail } from './mails.ts';
import { programmeView } from './queries/programmes.ts';
import { countLinkRequest } from './routes-session.ts';
import { portalSpecs } from './specs.ts';

/**
 * Payout settings: the payout details and tax forms the onboarding page takes, through the affiliates service's own
 * operations. Changing payout details (where the money goes) asks for more than a session: a fresh link mailed to the
 * affiliate's address, opened within 15 minutes, lets the session it opens change them for 15 minutes. So a session
 * taken over (a shared computer, a leaked cookie) cannot redirect payouts; tax forms likewise. Each change of payout
 * details is audited by the affiliates service (source `portal`, the affiliate as actor: the merchant's payout
 * details history shows it) and mailed to the affiliate in the transaction of the change.
 */

const who = (ctx: PortalContext) => ({
  merchantId: ctx.session.merchantId,
  affiliateId: ctx.session.affiliateId,
  requestId: ctx.requestId,
});

const FRESH_LINK_NEEDED =
  'Changing payout details or tax forms needs a fresh link: ask for one under Payout settings and open it from your mail';

const canChangeUntil = (ctx: PortalContext): Date | null => {
  const until = ctx.session.payoutDetailsUntil;
  return until && until.getTime() > Date.now() ? until : null;
};

export const payoutSettingsRoutes = [
  handle(portalSpecs.getPayoutSettings, async (ctx) => {
    const params = { affiliate_id: ctx.session.affiliateId };
    const [details, forms] = await Promise.all([
      ctx.call<MaskedPayoutDetails>(api.getPayoutDetails, who(ctx), { params }),
      ctx.call<{ data: TaxForm[] }>(api.listTaxForms, who(ctx), { params }),
    ]);
    const until = canChangeUntil(ctx);
    return {
      payout_details: details.method === null ? null : details,
      tax_forms: forms.data.map((f) => ({
        id: f.id,
        type: f.form_type,
        status: f.status,
        signed_at: f.signed_on,
        expires_at: f.expires_at,
      })),
      can_change_payout_details: until !== null,
      can_change_until: until ? until.toISOString() : null,
    };
  }),
  /** Mails the session's affiliate a `payout_details` link: counted against the same limits as sign-in links. */
  handle(portalSpecs.requestPayoutSettingsLink, async (ctx) => {
    const s = ctx.session;
    await countLinkRequest(ctx, s.email);
    const p = await programmeView(ctx.sql, s.merchantId, s.affiliateId);
    await ctx.sql.begin(async (tx) => {
      const { token } = await createPortalLink(tx, {
        purpose: 'payout_details',
        email: s.email,
        merchantId: s.merchantId,
        affiliateId: s.affiliateId,
      });
      const mail = payoutDetailsLinkMail(portalLinkUrl(ctx.config.PUBLIC_BASE_URL, token), p!.merchant_name);
      await enqueueMail(tx, ctx.masterKey, {
        merchantId: s.merchantId,
        kind: 'payout_details_link',
        to: s.email,
        ...mail,
      });
    });
    ctx.log.info('portal payout details link mailed', { affiliate_id: s.affiliateId });
    return {};
  }),
  // The bodies are the API's own (PutPayoutDetails, CreateTaxForm): the affiliates service validates them.
  handle(portalSpecs.putPayoutDetails, async (ctx, { body }) => {
    const s = ctx.session;
    if (!canChangeUntil(ctx)) throw new ApiError('FORBIDDEN', FRESH_LINK_NEEDED);
    const masked = await ctx.call<MaskedPayoutDetails>(api.putPayoutDetails, who(ctx), {
      params: { affiliate_id: s.affiliateId },
      body,
    });
    ctx.log.info('portal payout details changed', { affiliate_id: s.affiliateId, method: masked.method });
    return masked;
  }),
  handle(portalSpecs.createTaxForm, (ctx, { body }) => {
    // A tax form carries the legal name, TIN and address payouts are reported under: like payout details, only a
    // session a fresh link opened may file one.
    if (!canChangeUntil(ctx)) throw new ApiError('FORBIDDEN', FRESH_LINK_NEEDED);
    return ctx.call<TaxForm>(api.createTaxForm, who(ctx), {
      params: { affiliate_id: ctx.session.affiliateId },
      body,
    });
  }),
];
