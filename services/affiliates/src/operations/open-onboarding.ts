import { onboardingPageApi } from '@platform/shared/api/tax-forms';
import { hashApiKey } from '@platform/shared/crypto';
import type { Queryable } from '@platform/shared/db';
import { notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import type { OnboardingState } from '@platform/shared/schemas/tax-forms';
import { addVisitorId, findOnboardingLink, type OnboardingLinkRow } from '../queries/onboarding-links.ts';
import { listTaxForms } from '../queries/tax-forms.ts';
import { maskedPayoutDetails, presentTaxForm } from '../tax-form-store.ts';

/**
 * The onboarding page opened: the link's state and, while it can be used, what is on file (masked). The browser's
 * `_svc_sess` visit id joins the affiliate's visitor ids, so a conversion the affiliate makes through their own link
 * in that browser trips the own-fingerprint fraud rule. The merchant is the link's: the request carries no key.
 */
export const openOnboardingOperation = () =>
  defineOperation(onboardingPageApi.openOnboarding, async (ctx, { params, body }) => {
    const link = await findOnboardingLink(ctx.sql, hashApiKey(params.token));
    if (!link) throw notFound('onboarding link');
    // A cookie that is no visit id names no visit: nothing to record.
    const visitorId = isId('vis', body.visitor_id) ? body.visitor_id : null;
    if (visitorId) await addVisitorId(ctx.sql, link.merchant_id, link.affiliate_id, visitorId);
    ctx.log.info('onboarding page opened', {
      merchant_id: link.merchant_id,
      affiliate_id: link.affiliate_id,
      visitor_recorded: visitorId !== null,
    });
    return { outcome: 'ok', body: await onboardingState(ctx.sql, link) };
  });

export async function onboardingState(sql: Queryable, link: OnboardingLinkRow): Promise<OnboardingState> {
  const status = link.used_at ? 'used' : link.revoked_at ? 'revoked' : link.expired ? 'expired' : 'open';
  // A revoked or expired link shows nothing of what is on file: whoever holds it is no longer asked for anything.
  const onFile = status === 'open' || status === 'used';
  const forms = onFile ? await listTaxForms(sql, link.merchant_id, link.affiliate_id) : [];
  const current = forms.find((f) => f.status === 'valid');
  return {
    status,
    merchant_name: link.merchant_name,
    affiliate_name: link.affiliate_name,
    expires_at: link.expires_at.toISOString(),
    tax_form: current ? presentTaxForm(current) : null,
    payout_details: onFile ? await maskedPayoutDetails(sql, link.merchant_id, link.affiliate_id) : null,
  };
}
