import type { Sql } from '@platform/shared/db';
import { ApiError } from '@platform/shared/errors';
import {
  BalanceAccountLink,
  BalanceFunding,
  BalanceFundingResult,
  BalanceOverview,
  BalanceTransactionPage,
  BalanceTransactionsQuery,
} from './balance-schemas.ts';
import { route, type DashboardContext } from './define.ts';
import { decimalToMinor, minorToDecimal } from '@platform/shared/money';
import type { PaymentsCall, PaymentsCaller } from './payments.ts';

interface Account {
  id: string;
  livemode: boolean;
  email: string | null;
  details_submitted: boolean;
  charges_enabled: boolean;
  payouts_enabled: boolean;
  requirements: { currently_due: string[]; disabled_reason: string | null };
}
interface Balance {
  available: { amount: number; currency: string }[];
  pending: { amount: number; currency: string }[];
}
interface Transaction {
  id: string;
  type: string;
  status: string;
  amount: number;
  fee: number;
  net: number;
  currency: string;
  description: string | null;
  source: string;
  created: number;
  available_on: number;
}

/**
 * The merchant's connected account: the one the platform created with metadata[merchant_id] set to this merchant
 * (a live one before a test one, then the newest). Read from the payment API's own table, by merchant: another
 * merchant's account is never found.
 */
async function merchantAccount(sql: Sql, merchantId: string): Promise<{ id: string; livemode: boolean } | null> {
  const [row] = await sql<{ id: string; livemode: boolean }[]>`
    select id, livemode from payment_accounts where merchant_id = ${merchantId}
    order by livemode desc, created_at desc, id desc limit 1`;
  return row ?? null;
}

const money = (m: { amount: number; currency: string }) => ({
  amount: minorToDecimal(m.amount, m.currency),
  currency: m.currency,
});
const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

/**
 * The Balance page: the merchant's connected account on the platform payment API (/v1), asked of the payments
 * service for the session's merchant: its onboarding status and an account link to complete it, its available and
 * pending balance, funding it by a payment intent, and its balance transactions.
 */
export function balanceRoutes(payments: PaymentsCaller | null) {
  const ask = <T>(ctx: DashboardContext, operation: string, call: PaymentsCall) =>
    payments!<T>(operation, call, { requestId: ctx.requestId, userId: ctx.session.userId });
  const requireAccount = async (ctx: DashboardContext) => {
    const account = await merchantAccount(ctx.sql, ctx.session.merchantId);
    if (!account) throw new ApiError('NOT_FOUND', 'No connected account: the platform has not created one yet');
    return account;
  };

  return [
    route({
      operationId: 'getBalance',
      method: 'get',
      path: '/dashboard/api/balance',
      summary: 'The connected account’s onboarding status and balance',
      success: { status: 200, schema: BalanceOverview, description: 'the account (or null) and its balance' },
      async handler(ctx: DashboardContext) {
        const found = await merchantAccount(ctx.sql, ctx.session.merchantId);
        if (!found) return { account: null, available: [], pending: [] };
        const mode = { livemode: found.livemode, params: {} };
        const [account, balance] = await Promise.all([
          ask<Account>(ctx, 'retrieve_account', { ...mode, account: null, path: { id: found.id } }),
          ask<Balance>(ctx, 'retrieve_balance', { ...mode, account: found.id }),
        ]);
        return {
          account: {
            id: account.id,
            livemode: account.livemode,
            email: account.email,
            details_submitted: account.details_submitted,
            charges_enabled: account.charges_enabled,
            payouts_enabled: account.payouts_enabled,
            currently_due: account.requirements.currently_due,
            disabled_reason: account.requirements.disabled_reason,
          },
          available: balance.available.map(money),
          pending: balance.pending.map(money),
        };
      },
    }),
    route({
      operationId: 'createBalanceAccountLink',
      method: 'post',
      path: '/dashboard/api/balance/account_link',
      summary: 'A single-use onboarding link for the connected account, back to the Balance page',
      success: { status: 201, schema: BalanceAccountLink, description: 'the link' },
      async handler(ctx: DashboardContext) {
        const account = await requireAccount(ctx);
        const back = `${ctx.origin}/dashboard/balance`;
        const link = await ask<{ url: string; expires_at: number }>(ctx, 'create_account_link', {
          livemode: account.livemode,
          account: null,
          params: { account: account.id, type: 'account_onboarding', return_url: back, refresh_url: back },
        });
        return { url: link.url, expires_at: iso(link.expires_at) };
      },
    }),
    route({
      operationId: 'fundBalance',
      method: 'post',
      path: '/dashboard/api/balance/fund',
      summary: 'Fund a test-mode connected account: a payment intent to it with a test card, confirmed at once',
      body: BalanceFunding,
      success: { status: 201, schema: BalanceFundingResult, description: 'the payment intent as it ended' },
      async handler(ctx: DashboardContext, { body }) {
        const account = await requireAccount(ctx);
        // Live money comes from real payments to the account; the dashboard's cards are the sandbox's test cards,
        // which live mode refuses anyway.
        if (account.livemode)
          throw new ApiError('CONFLICT', 'A live account is funded by real payments to it, not from the dashboard');
        const amount = decimalToMinor(body.amount, body.currency);
        if (amount === null)
          throw new ApiError('INVALID_INPUT', 'The request is invalid', [
            { path: 'amount', message: `has more decimals than ${body.currency.toUpperCase()} has` },
          ]);
        const intent = await ask<{ id: string; status: string; amount: number; currency: string }>(
          ctx,
          'create_payment_intent',
          {
            livemode: account.livemode,
            account: null,
            params: {
              amount: String(amount),
              currency: body.currency,
              payment_method: body.payment_method,
              confirm: 'true',
              transfer_data: { destination: account.id },
              description: 'Funding from the dashboard',
              metadata: { merchant_id: ctx.session.merchantId, dashboard_user: ctx.session.userId },
            },
          },
        );
        return { id: intent.id, status: intent.status, amount: money(intent) };
      },
    }),
    route({
      operationId: 'listBalanceTransactions',
      method: 'get',
      path: '/dashboard/api/balance/transactions',
      summary: 'The connected account’s balance transactions, newest first, 20 a page',
      query: BalanceTransactionsQuery,
      success: { status: 200, schema: BalanceTransactionPage, description: 'a page of transactions' },
      async handler(ctx: DashboardContext, { query }) {
        const found = await merchantAccount(ctx.sql, ctx.session.merchantId);
        if (!found) return { data: [], next_cursor: null };
        const page = await ask<{ data: Transaction[]; has_more: boolean }>(ctx, 'list_balance_transactions', {
          livemode: found.livemode,
          account: found.id,
          params: { limit: '20', ...(query.starting_after ? { starting_after: query.starting_after } : {}) },
        });
        return {
          data: page.data.map((t) => ({
            id: t.id,
            type: t.type,
            status: t.status,
            amount: minorToDecimal(t.amount, t.currency),
            fee: minorToDecimal(t.fee, t.currency),
            net: minorToDecimal(t.net, t.currency),
            currency: t.currency,
            description: t.description,
            source: t.source,
            created: iso(t.created),
            available_on: iso(t.available_on),
          })),
          next_cursor: page.has_more ? page.data[page.data.length - 1]!.id : null,
        };
      },
    }),
  ];
}
