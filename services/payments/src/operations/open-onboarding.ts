import { hashApiKey } from '@platform/shared/crypto';
import type { OnboardingRequest } from '@platform/shared/payments/rpc';
import type { PaymentsDeps } from '../deps.ts';
import { findAccountLink, openAccountLink } from '../queries/account-links.ts';
import type { PaymentsRoute } from '../serve.ts';
import { onboardingPage, TOKEN_SHAPE } from '../onboarding-page.ts';

/** GET /connect/onboarding/{token}: the form, the first time; refresh_url when used or expired. */
export const openOnboarding = (deps: PaymentsDeps): PaymentsRoute<OnboardingRequest> => ({
  name: 'onboarding_open',
  async run(request) {
    if (!TOKEN_SHAPE.test(request.token)) return { outcome: 'ok', body: { kind: 'not_found' } };
    const hash = hashApiKey(request.token);
    const link = await findAccountLink(deps.sql, hash);
    if (!link) return { outcome: 'ok', body: { kind: 'not_found' } };
    if (!(await openAccountLink(deps.sql, hash)))
      return { outcome: 'ok', body: { kind: 'redirect', url: link.refresh_url } };
    return { outcome: 'ok', body: await onboardingPage(deps, link, {}, {}) };
  },
});
