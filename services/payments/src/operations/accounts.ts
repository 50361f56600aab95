import { isId, newId } from '@platform/shared/ids';
import { invalidRequest, resourceMissing } from '@platform/shared/payments/errors';
import { paymentsApi } from '@platform/shared/payments/operations';
import type { PaymentsDeps } from '../deps.ts';
import { listPage } from '../list.ts';
import { definePaymentsOperation } from '../operation.ts';
import { presentAccount } from '../present.ts';
import { accountCreatedAt, findAccount, insertAccount, listAccounts, merchantExists } from '../queries/accounts.ts';
import { cleanMetadata, checkCurrency } from './params.ts';

export const createAccountOperation = (deps: PaymentsDeps) =>
  definePaymentsOperation(deps, paymentsApi.createAccount, async (ctx, params) => {
    const metadata = cleanMetadata(params.metadata);
    // Only a live key binds the account to a merchant (its funds then pay the merchant's affiliate payouts); with a
    // test key metadata[merchant_id] is kept as plain metadata, as any other key. The operator binds test accounts.
    const merchantId = ctx.livemode ? (metadata['merchant_id'] ?? null) : null;
    if (merchantId !== null && !(isId('mer', merchantId) && (await merchantExists(ctx.sql, merchantId))))
      throw invalidRequest(`No such merchant: '${merchantId}'`, { param: 'metadata[merchant_id]' });
    const row = await insertAccount(ctx.sql, {
      id: newId('acct'),
      livemode: ctx.livemode,
      type: params.type ?? 'express',
      country: (params.country ?? 'US').toUpperCase(),
      email: params.email ?? null,
      business_type: params.business_type ?? null,
      merchant_id: merchantId,
      metadata,
      default_currency: params.default_currency ? checkCurrency(params.default_currency, 'default_currency') : 'usd',
    });
    return presentAccount(row);
  });

export const retrieveAccountOperation = (deps: PaymentsDeps) =>
  definePaymentsOperation(deps, paymentsApi.retrieveAccount, async (ctx, _params, id) => {
    const row = await findAccount(ctx.sql, ctx.livemode, id);
    if (!row) throw resourceMissing('account', id);
    return presentAccount(row);
  });

export const listAccountsOperation = (deps: PaymentsDeps) =>
  definePaymentsOperation(deps, paymentsApi.listAccounts, (ctx, params) =>
    listPage({
      params,
      url: '/v1/accounts',
      locate: (id) => accountCreatedAt(ctx.sql, ctx.livemode, id),
      fetch: (position, limit) => listAccounts(ctx.sql, ctx.livemode, params, position, limit),
      present: presentAccount,
    }),
  );
