import { api } from '@platform/shared/api';
import { ApiError, invalidInput, notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { createPortalLink, portalLinkUrl } from '@platform/shared/portal-links';
import type { AffiliatesDeps } from '../deps.ts';
import { findAffiliate } from '../queries/affiliates.ts';
import { frameOrigins } from '../queries/programmes.ts';

/**
 * POST /api/v1/affiliates/{id}/portal_sessions: an `embed` link (shared/src/portal-links.ts), single use and valid
 * for 5 minutes, that opens the portal signed in as this affiliate of this merchant only (no programme switcher).
 * Only approved affiliates sign in to the portal (decisions §15): another status is a state the affiliate is in, not
 * bad input, so CONFLICT (409), as for any move the affiliate's status refuses. The return URL must be on one of the
 * origins the merchant lets frame the portal: the portal links back to it, and an open redirect would let anyone
 * who can make a session send an affiliate elsewhere.
 */
export const createPortalSessionOperation = (deps: AffiliatesDeps) =>
  defineOperation(api.createPortalSession, async (ctx, { params, body }) => {
    const affiliate = isId('aff', params.affiliate_id)
      ? await findAffiliate(ctx.sql, ctx.merchantId, params.affiliate_id)
      : undefined;
    if (!affiliate) throw notFound('affiliate');
    if (affiliate.status !== 'approved')
      throw new ApiError('CONFLICT', `A ${affiliate.status} affiliate cannot sign in to the portal; approve it first`);
    const returnUrl = body.return_url ?? null;
    if (returnUrl !== null) {
      const origins = await frameOrigins(ctx.sql, ctx.merchantId);
      const origin = URL.canParse(returnUrl) ? new URL(returnUrl).origin : null;
      if (origin === null || !origins.includes(origin))
        throw invalidInput(
          'return_url',
          "must be on one of the programme's frame origins (Settings → Programme in the dashboard)",
        );
    }
    const { token, expiresAt } = await ctx.sql.begin((tx) =>
      createPortalLink(tx, {
        purpose: 'embed',
        email: affiliate.email,
        merchantId: ctx.merchantId,
        affiliateId: affiliate.id,
        returnUrl,
      }),
    );
    ctx.log.info('portal session link created', { affiliate_id: affiliate.id });
    return {
      outcome: 'created',
      body: {
        object: 'portal_session' as const,
        url: portalLinkUrl(deps.publicBaseUrl, token),
        expires_at: expiresAt.toISOString(),
      },
    };
  });
