import { randomBytes } from 'node:crypto';
import { api } from '@platform/shared/api';
import { hashApiKey } from '@platform/shared/crypto';
import { notFound } from '@platform/shared/errors';
import { isId, newId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import type { AffiliatesDeps } from '../deps.ts';
import { insertOnboardingLink, revokeOtherOpenLinks } from '../queries/onboarding-links.ts';
import { findAffiliate } from '../queries/affiliates.ts';
import { lockAffiliate } from '../queries/tax-forms.ts';

const LINK_LIFETIME_MS = 24 * 3600 * 1000;

/**
 * A link to the onboarding page: 256 random bits in the URL, only their SHA-256 stored (like API keys, a fast hash
 * is enough for a value nobody can guess). The page itself is served by the gateway, on the merchant's tracking host
 * when it has one: the host whose `_svc_sess` cookie the affiliate's own referral clicks set, which the page records.
 * The new link revokes the affiliate's other open links, under the affiliate's lock: one usable link at a time.
 */
export const createOnboardingLinkOperation = (deps: AffiliatesDeps) =>
  defineOperation(api.createOnboardingLink, async (ctx, { params }) => {
    const affiliate = isId('aff', params.affiliate_id)
      ? await findAffiliate(ctx.sql, ctx.merchantId, params.affiliate_id)
      : undefined;
    if (!affiliate) throw notFound('affiliate');
    const base = affiliate.tracking_host ? `https://${affiliate.tracking_host}` : deps.publicBaseUrl;
    const token = randomBytes(32).toString('base64url');
    const tokenHash = hashApiKey(token);
    const expiresAt = new Date(Date.now() + LINK_LIFETIME_MS);
    const id = newId('obl');
    const revoked = await ctx.sql.begin(async (tx) => {
      if (!(await lockAffiliate(tx, ctx.merchantId, params.affiliate_id))) throw notFound('affiliate');
      await insertOnboardingLink(tx, {
        id,
        tokenHash,
        merchantId: ctx.merchantId,
        affiliateId: params.affiliate_id,
        expiresAt,
      });
      return revokeOtherOpenLinks(tx, ctx.merchantId, params.affiliate_id, tokenHash);
    });
    ctx.log.info('onboarding link created', { affiliate_id: params.affiliate_id, link_id: id, revoked });
    return {
      outcome: 'created',
      body: { id, url: `${base}/onboarding/${token}`, expires_at: expiresAt.toISOString() },
    };
  });
