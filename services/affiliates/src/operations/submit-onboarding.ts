import { onboardingPageApi } from '@platform/shared/api/tax-forms';
import { hashApiKey } from '@platform/shared/crypto';
import { ApiError, notFound } from '@platform/shared/errors';
import { defineOperation } from '@platform/shared/operation';
import { outboxCommitted } from '@platform/shared/outbox';
import type { AffiliatesDeps } from '../deps.ts';
import { findOnboardingLink, markOnboardingLinkUsed, revokeOtherOpenLinks } from '../queries/onboarding-links.ts';
import { lockAffiliate } from '../queries/tax-forms.ts';
import { checkedPayoutDetails, checkedTaxForm, recordPayoutDetails, recordTaxForm } from '../tax-form-store.ts';
import { onboardingState } from './open-onboarding.ts';

/**
 * The onboarding page submitted: the tax form and the payout details are stored (the change audited), the link used
 * up and the affiliate's other open links revoked, in one transaction (the affiliate and the link locked, so two
 * submissions of one link, or of two links, store one). Invalid input leaves the link usable.
 */
export const submitOnboardingOperation = (deps: AffiliatesDeps) =>
  defineOperation(onboardingPageApi.submitOnboarding, async (ctx, { params, body }) => {
    const tokenHash = hashApiKey(params.token);
    const checkedForm = checkedTaxForm(body.tax_form, new Date(), 'tax_form.');
    const details = checkedPayoutDetails(body.payout_details, 'payout_details.');
    const { state, link } = await ctx.sql.begin(async (tx) => {
      // The affiliate's lock first, then the link's (read again under it): the order creating a link takes too.
      const named = await findOnboardingLink(tx, tokenHash);
      if (!named || !(await lockAffiliate(tx, named.merchant_id, named.affiliate_id)))
        throw notFound('onboarding link');
      const link = (await findOnboardingLink(tx, tokenHash, true))!;
      if (link.used_at) throw new ApiError('CONFLICT', 'This onboarding link has already been used');
      if (link.revoked_at) throw new ApiError('CONFLICT', 'This onboarding link was replaced by a newer one');
      if (link.expired) throw new ApiError('CONFLICT', 'This onboarding link has expired');
      await recordTaxForm(tx, deps.vaultKeys, link.merchant_id, link.affiliate_id, body.tax_form, checkedForm);
      await recordPayoutDetails(tx, deps.vaultKeys, link.merchant_id, link.affiliate_id, details, {
        source: 'onboarding_link',
        actorId: link.id,
      });
      await markOnboardingLinkUsed(tx, tokenHash);
      await revokeOtherOpenLinks(tx, link.merchant_id, link.affiliate_id, tokenHash);
      return { state: await onboardingState(tx, { ...link, used_at: new Date() }), link };
    });
    outboxCommitted(ctx.sql);
    ctx.log.info('onboarding submitted', {
      merchant_id: link.merchant_id,
      affiliate_id: link.affiliate_id,
      form_type: body.tax_form.form_type,
    });
    return { outcome: 'ok', body: state };
  });
