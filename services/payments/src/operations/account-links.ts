import { randomBytes } from 'node:crypto';
import { encryptSecret, hashApiKey, secretPlace } from '@platform/shared/crypto';
import type { Logger } from '@platform/shared/log';
import { invalidRequest } from '@platform/shared/payments/errors';
import { paymentsApi } from '@platform/shared/payments/operations';
import type { OnboardingReply, OnboardingRequest } from '@platform/shared/payments/rpc';
import type { PaymentsDeps } from '../deps.ts';
import { unixSeconds } from '../list.ts';
import { checkOnboardingForm } from '../onboarding-form.ts';
import { definePaymentsOperation } from '../operation.ts';
import { findAccount, saveOnboarding } from '../queries/accounts.ts';
import {
  findAccountLink,
  insertAccountLink,
  markSubmitted,
  openAccountLink,
  type AccountLinkRow,
} from '../queries/account-links.ts';
import type { Handler } from '../rpc.ts';

/** How long a form opened through a link may take to submit, though the link itself expires in minutes. */
const FORM_SESSION_MS = 60 * 60 * 1000;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/**
 * POST /v1/account_links: a single-use URL to the hosted onboarding page. Only the token's hash is stored; the
 * link can be opened once, until it expires, and its form submitted once.
 */
export const createAccountLinkOperation = (deps: PaymentsDeps) =>
  definePaymentsOperation(deps, paymentsApi.createAccountLink, async (ctx, params) => {
    if (!(await findAccount(ctx.sql, ctx.livemode, params.account)))
      throw invalidRequest(`No such account: '${params.account}'`, { code: 'resource_missing', param: 'account' });
    const token = randomBytes(32).toString('base64url');
    const link = await insertAccountLink(ctx.sql, {
      token_hash: hashApiKey(token),
      account_id: params.account,
      livemode: ctx.livemode,
      refresh_url: params.refresh_url,
      return_url: params.return_url,
      ttlSeconds: deps.accountLinkTtlSeconds,
    });
    return {
      object: 'account_link' as const,
      created: unixSeconds(link.created_at),
      expires_at: unixSeconds(link.expires_at),
      url: `${deps.publicBaseUrl}/connect/onboarding/${token}`,
    };
  });

const origins = (link: AccountLinkRow) => [
  ...new Set([new URL(link.return_url).origin, new URL(link.refresh_url).origin]),
];

async function page(
  deps: PaymentsDeps,
  link: AccountLinkRow,
  values: Record<string, string>,
  problems: Record<string, string>,
) {
  const account = (await findAccount(deps.sql, link.livemode, link.account_id))!;
  return {
    kind: 'page' as const,
    account: { id: account.id, email: account.email, business_name: account.business_name, country: account.country },
    redirect_origins: origins(link),
    values: { business_name: account.business_name ?? '', business_url: account.business_url ?? '', ...values },
    problems,
  };
}

/** GET /connect/onboarding/{token}: the form, the first time; refresh_url when used or expired. */
export const openOnboarding = (deps: PaymentsDeps): Handler<OnboardingRequest> => ({
  name: 'onboarding_open',
  async run(request): Promise<OnboardingReply> {
    if (!TOKEN_SHAPE.test(request.token)) return { kind: 'not_found' };
    const hash = hashApiKey(request.token);
    const link = await findAccountLink(deps.sql, hash);
    if (!link) return { kind: 'not_found' };
    if (!(await openAccountLink(deps.sql, hash))) return { kind: 'redirect', url: link.refresh_url };
    return page(deps, link, {}, {});
  },
});

/** POST /connect/onboarding/{token}: stores what was entered (the bank account encrypted), then return_url. */
export const submitOnboarding = (deps: PaymentsDeps): Handler<OnboardingRequest> => ({
  name: 'onboarding_submit',
  async run(request, log: Logger): Promise<OnboardingReply> {
    if (!TOKEN_SHAPE.test(request.token)) return { kind: 'not_found' };
    const hash = hashApiKey(request.token);
    return deps.sql.begin(async (tx): Promise<OnboardingReply> => {
      const link = await findAccountLink(tx, hash, true);
      if (!link) return { kind: 'not_found' };
      const sessionOver = !link.opened_at || link.opened_at.getTime() + FORM_SESSION_MS < Date.now();
      if (link.submitted_at || sessionOver) return { kind: 'redirect', url: link.refresh_url };
      const checked = checkOnboardingForm(request.form ?? {});
      if ('problems' in checked) return page(deps, link, checked.values, checked.problems);
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
  },
});
