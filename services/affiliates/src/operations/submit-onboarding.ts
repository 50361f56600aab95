import { onboardingPageApi } from '@platform/shared/api/tax-forms';
import { hashApiKey } from '@platform/shared/crypto';
import { ApiError, notFound } from '@platform/shared/errors';
import { defineOperation } from '@platform/shared/operation';
import { outboxCommitted } from '@platform/shared/outbox';
import type { AffiliatesDeps } from '../deps.ts';
import { findOnboardingLink, markOnboardingLinkUsed } from '../queries/onboarding-links.ts';
import { lockAffiliate } from '../queries/tax-forms.ts';
import { checkedPayoutDetails, checkedTaxForm, recordPayoutDetails, recordTaxForm } from '../tax-form-store.ts';
import { onboardingState } from './open-onboarding.ts';

/**
 * The onboarding page submitted: the tax form and the payout details are stored, and the link used up, in one
 * transaction (the link row locked, so two submissions of one link store one). Invalid input leaves the link usable.
 */
export const submitOnboardingOperation = (deps: AffiliatesDeps) =>
  defineOperation(onboardingPageApi.submitOnboarding, async (ctx, { params, body }) => {
    const tokenHash = hashApiKey(params.token);
    const checkedForm = checkedTaxForm(body.tax_form, new Date(), 'tax_form.');
    const details = checkedPayoutDetails(body.payout_details, 'payout_details.');
    const { state, link } = await ctx.sql.begin(async (tx) => {
      const link = await findOnboardingLink(tx, tokenHash, true);
      if (!link) throw notFound('onboarding link');
      if (link.used_at) throw new ApiError('CONFLICT', 'This onboarding link has already been used');
      if (link.expired) throw new ApiError('CONFLICT', 'This onboarding link has expired');
      if (!(await lockAffiliate(tx, link.merchant_id, link.affiliate_id))) throw notFound('onboarding link');
      await recordTaxForm(tx, deps.vaultKeys, link.merchant_id, link.affiliate_id, body.tax_form, checkedForm);
      await recordPayoutDetails(tx, deps.vaultKeys, link.merchant_id, link.affiliate_id, details);
      await markOnboardingLinkUsed(tx, tokenHash);
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
