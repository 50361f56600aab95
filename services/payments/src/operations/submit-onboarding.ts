import { encryptSecret, hashApiKey, secretPlace } from '@platform/shared/crypto';
import type { OnboardingReply, OnboardingRequest } from '@platform/shared/payments/rpc';
import type { PaymentsDeps } from '../deps.ts';
import { checkOnboardingForm } from '../onboarding-form.ts';
import { saveOnboarding } from '../queries/accounts.ts';
import { findAccountLink, markSubmitted } from '../queries/account-links.ts';
import type { PaymentsRoute } from '../serve.ts';
import { onboardingPage, TOKEN_SHAPE } from '../onboarding-page.ts';

/** How long a form opened through a link may take to submit, though the link itself expires in minutes. */
const FORM_SESSION_MS = 60 * 60 * 1000;

/** POST /connect/onboarding/{token}: stores what was entered (the bank account encrypted), then return_url. */
export const submitOnboarding = (deps: PaymentsDeps): PaymentsRoute<OnboardingRequest> => ({
  name: 'onboarding_submit',
  async run(request, log) {
    if (!TOKEN_SHAPE.test(request.token)) return { outcome: 'ok', body: { kind: 'not_found' } };
    const hash = hashApiKey(request.token);
    const reply = await deps.sql.begin(async (tx): Promise<OnboardingReply> => {
      const link = await findAccountLink(tx, hash, true);
      if (!link) return { kind: 'not_found' };
      const sessionOver = !link.opened_at || link.opened_at.getTime() + FORM_SESSION_MS < Date.now();
      if (link.submitted_at || sessionOver) return { kind: 'redirect', url: link.refresh_url };
      const checked = checkOnboardingForm(request.form ?? {});
      if ('problems' in checked) return onboardingPage(deps, link, checked.values, checked.problems);
      const d = checked.details;
      const bank = JSON.stringify({
        routing_number: d.routing_number,
        account_number: d.account_number,
        holder: d.account_holder_name,
      });
      await saveOnboarding(tx, link.account_id, {
        business_name: d.business_name,
        business_url: d.business_url,
        product_description: d.product_description,
        bank_account_encrypted: encryptSecret(
          deps.encryptionKey,
          bank,
          secretPlace('bank-account', link.account_id, String(link.livemode)),
        ),
        bank_last4: d.account_number.slice(-4),
        bank_routing_number: d.routing_number,
        bank_holder_name: d.account_holder_name,
      });
      await markSubmitted(tx, hash);
      log.info('account onboarding submitted', { account_id: link.account_id });
      return { kind: 'redirect', url: link.return_url };
    });
    return { outcome: 'ok', body: reply };
  },
});
