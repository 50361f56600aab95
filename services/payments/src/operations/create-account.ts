import { isId, newId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { invalidRequest } from '@platform/shared/payments/errors';
import { paymentsApi } from '@platform/shared/payments/operations';
import type { PaymentsContext } from '../context.ts';
import { presentAccount } from '../present.ts';
import { insertAccount, lockMerchantAccount, merchantExists } from '../queries/accounts.ts';
import { stripeRefusals } from '../stripe-errors.ts';
import { cleanMetadata, checkCurrency } from './params.ts';

export const createAccountOperation = defineOperation(
  paymentsApi.createAccount,
  async (ctx: PaymentsContext, { params }) => {
    const metadata = cleanMetadata(params.metadata);
    // Only a live key binds the account to a merchant (its funds then pay the merchant's affiliate payouts); with a
    // test key metadata[merchant_id] is kept as plain metadata, as any other key. The operator binds test accounts,
    // or the merchant opens its own from the dashboard (ctx.forMerchant, below).
    const merchantId = ctx.livemode ? (metadata['merchant_id'] ?? null) : null;
    if (merchantId !== null && !(isId('mer', merchantId) && (await merchantExists(ctx.sql, merchantId))))
      throw invalidRequest(`No such merchant: '${merchantId}'`, { param: 'metadata[merchant_id]' });
    const account = {
      id: newId('acct'),
      livemode: ctx.livemode,
      type: params.type ?? 'express',
      country: (params.country ?? 'US').toUpperCase(),
      email: params.email ?? null,
      business_type: params.business_type ?? null,
      merchant_id: merchantId,
      metadata,
      default_currency: params.default_currency ? checkCurrency(params.default_currency, 'default_currency') : 'usd',
    };
    const forMerchant = ctx.forMerchant;
    if (forMerchant === null) return { outcome: 'ok', body: presentAccount(await insertAccount(ctx.sql, account)) };
    // A merchant opening its own account from the dashboard: one per mode, so asking again (a second click, a retry)
    // answers the account it already has.
    const row = await ctx.sql.begin(
      async (tx) =>
        (await lockMerchantAccount(tx, forMerchant, ctx.livemode)) ??
        (await insertAccount(tx, { ...account, merchant_id: forMerchant })),
    );
    return { outcome: 'ok', body: presentAccount(row) };
  },
  stripeRefusals,
);
