import { randomBytes } from 'node:crypto';
import { hashApiKey } from '@platform/shared/crypto';
import { defineOperation } from '@platform/shared/operation';
import { invalidRequest } from '@platform/shared/payments/errors';
import { paymentsApi } from '@platform/shared/payments/operations';
import type { PaymentsContext } from '../context.ts';
import { unixSeconds } from '../present.ts';
import { findAccount } from '../queries/accounts.ts';
import { insertAccountLink } from '../queries/account-links.ts';
import { stripeRefusals } from '../stripe-errors.ts';

/**
 * POST /v1/account_links: a single-use URL to the hosted onboarding page. Only the token's hash is stored; the
 * link can be opened once, until it expires, and its form submitted once (open-onboarding.ts, submit-onboarding.ts).
 */
export const createAccountLinkOperation = defineOperation(
  paymentsApi.createAccountLink,
  async (ctx: PaymentsContext, { params }) => {
    if (!(await findAccount(ctx.sql, ctx.livemode, params.account)))
      throw invalidRequest(`No such account: '${params.account}'`, { code: 'resource_missing', param: 'account' });
    const token = randomBytes(32).toString('base64url');
    const link = await insertAccountLink(ctx.sql, {
      token_hash: hashApiKey(token),
      account_id: params.account,
      livemode: ctx.livemode,
      refresh_url: params.refresh_url,
      return_url: params.return_url,
      ttlSeconds: ctx.deps.accountLinkTtlSeconds,
    });
    return {
      outcome: 'ok',
      body: {
        object: 'account_link' as const,
        created: unixSeconds(link.created_at),
        expires_at: unixSeconds(link.expires_at),
        url: `${ctx.deps.publicBaseUrl}/connect/onboarding/${token}`,
      },
    };
  },
  stripeRefusals,
);
