import { ApiError } from '@platform/shared/errors';
import { handle, type DashboardContext } from './define.ts';
import { decimalToMinor, minorToDecimal } from '@platform/shared/money';
import type { PaymentsCall, PaymentsCaller } from './payments.ts';
import { merchantAccount } from './queries/balance.ts';
import { dashboardSpecs as specs } from './specs.ts';

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

const money = (m: { amount: number; currency: string }) => ({
  amount: minorToDecimal(m.amount, m.currency),
  currency: m.currency,
});
const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

/**
 * The Balance page: the merchant's connected account on the platform payment API (/v1), asked of the payments
 * service for the session's merchant: opening it (live in production, test mode elsewhere), its onboarding status
 * and an account link to complete it, its available and pending balance, funding it by a payment intent, and its
 * balance transactions.
 */
export function balanceRoutes(payments: PaymentsCaller, livemode: boolean) {
  const ask = <T>(ctx: DashboardContext, operation: string, call: PaymentsCall) =>
    payments<T>(operation, call, { requestId: ctx.requestId, userId: ctx.session.userId });
  const requireAccount = async (ctx: DashboardContext) => {
    const account = await merchantAccount(ctx.sql, ctx.session.merchantId);
    if (!account) throw new ApiError('NOT_FOUND', 'No connected account: open one on the Balance page first');
    return account;
  };

  return [
    handle(specs.getBalance, async (ctx) => {
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
    }),
    handle(specs.openBalanceAccount, async (ctx, { body }) => {
      // The merchant's own account, in the deployment's mode; asked again, the payments service answers the same one.
      const account = await payments<Account>(
        'create_account',
        {
          livemode,
          account: null,
          params: { type: 'express', country: body.country ?? 'US', email: ctx.session.email },
        },
        { requestId: ctx.requestId, userId: ctx.session.userId, forMerchant: ctx.session.merchantId },
      );
      ctx.log.info('connected account opened from the dashboard', {
        merchant_id: ctx.session.merchantId,
        user_id: ctx.session.userId,
        account: account.id,
      });
      return { id: account.id, livemode: account.livemode };
    }),
    handle(specs.createBalanceAccountLink, async (ctx) => {
      const account = await requireAccount(ctx);
      const back = `${ctx.origin}/dashboard/balance`;
      const link = await ask<{ url: string; expires_at: number }>(ctx, 'create_account_link', {
        livemode: account.livemode,
        account: null,
        params: { account: account.id, type: 'account_onboarding', return_url: back, refresh_url: back },
      });
      return { url: link.url, expires_at: iso(link.expires_at) };
    }),
    handle(specs.fundBalance, async (ctx, { body }) => {
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
    }),
    handle(specs.listBalanceTransactions, async (ctx, { query }) => {
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
    }),
  ];
}
