import { randomBytes } from 'node:crypto';
import { api } from '@platform/shared/api';
import { hashApiKey } from '@platform/shared/crypto';
import { notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import type { AffiliatesDeps } from '../deps.ts';
import { insertOnboardingLink } from '../queries/onboarding-links.ts';
import { affiliateExists } from '../queries/tax-forms.ts';

const LINK_LIFETIME_MS = 24 * 3600 * 1000;

/**
 * A link to the onboarding page: 256 random bits in the URL, only their SHA-256 stored (like API keys, a fast hash
 * is enough for a value nobody can guess). The page itself is served by the gateway.
 */
export const createOnboardingLinkOperation = (deps: AffiliatesDeps) =>
  defineOperation(api.createOnboardingLink, async (ctx, { params }) => {
    if (!isId('aff', params.affiliate_id) || !(await affiliateExists(ctx.sql, ctx.merchantId, params.affiliate_id)))
      throw notFound('affiliate');
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + LINK_LIFETIME_MS);
    await insertOnboardingLink(ctx.sql, {
      tokenHash: hashApiKey(token),
      merchantId: ctx.merchantId,
      affiliateId: params.affiliate_id,
      expiresAt,
    });
    ctx.log.info('onboarding link created', { affiliate_id: params.affiliate_id });
    return {
      outcome: 'created',
      body: { url: `${deps.publicBaseUrl}/onboarding/${token}`, expires_at: expiresAt.toISOString() },
    };
  });
