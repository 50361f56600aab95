import type { OnboardingReply } from '@platform/shared/payments/rpc';
import type { PaymentsDeps } from './deps.ts';
import { findAccount } from './queries/accounts.ts';
import type { AccountLinkRow } from './queries/account-links.ts';

/** The shape of an account link's token: anything else names no link. */
export const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

const origins = (link: AccountLinkRow) => [
  ...new Set([new URL(link.return_url).origin, new URL(link.refresh_url).origin]),
];

/** The onboarding form of a link's account, with what was entered and the problems found in it. */
export async function onboardingPage(
  deps: PaymentsDeps,
  link: AccountLinkRow,
  values: Record<string, string>,
  problems: Record<string, string>,
): Promise<OnboardingReply> {
  const account = (await findAccount(deps.sql, link.livemode, link.account_id))!;
  return {
    kind: 'page' as const,
    account: { id: account.id, email: account.email, business_name: account.business_name, country: account.country },
    redirect_origins: origins(link),
    values: { business_name: account.business_name ?? '', business_url: account.business_url ?? '', ...values },
    problems,
  };
}
