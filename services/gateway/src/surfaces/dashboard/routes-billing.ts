import { encryptionKey } from '@platform/shared/config';
import { ApiError } from '@platform/shared/errors';
import { minorToDecimal } from '@platform/shared/money';
import { PLAN_CATALOGUE, PLANS } from '@platform/shared/plans';
import { billingPayments, type GatewayConfig } from '../../config.ts';
import { claimLeaseMs, testCard, upgrade, type AskPayments } from './billing-charge.ts';
import { downgrade, retryPastDue } from './billing-renewals.ts';
import { handle, type DashboardContext } from './define.ts';
import type { PaymentsCaller } from './payments.ts';
import { billingAccount, pendingRequest, receipts, saveCard, type ChargeRow } from './queries/billing.ts';
import { merchantPlan } from './queries/plans.ts';
import { dashboardSpecs as specs } from './specs.ts';

const money = (amount: number | string, currency: string) => ({
  amount: minorToDecimal(Number(amount), currency),
  currency,
});

const presentPlans = () =>
  PLANS.map((id) => {
    const terms = PLAN_CATALOGUE[id];
    return {
      id,
      name: terms.name,
      price: terms.price ? money(terms.price.amount, terms.price.currency) : null,
      api_keys: terms.allows.api_keys,
      custom_rate_limits: terms.allows.custom_rate_limits,
      rate_limit_per_min: terms.limits.rate_limit_per_min ? { ...terms.limits.rate_limit_per_min } : null,
    };
  });

const presentReceipt = (r: ChargeRow) => ({
  id: r.id,
  kind: r.kind,
  from_plan: r.from_plan,
  to_plan: r.to_plan,
  amount: money(r.amount, r.currency),
  card: r.card_last4 ? `${r.card_brand} •••• ${r.card_last4}` : null,
  payment_intent: r.payment_intent,
  created_at: r.created_at.toISOString(),
});

/**
 * Settings › Plan: the catalogue's plans, the merchant's plan and card, its receipts, and upgrades paid on the
 * platform's own account of the payments service (billing-charge.ts), or asked of the operator (docs/BILLING.md).
 */
export function billingRoutes(payments: PaymentsCaller, config: GatewayConfig) {
  const mode = billingPayments(config);
  // The platform's own account (no Stripe-Account), test mode: the sandbox's cards are test money.
  const askFor =
    (ctx: DashboardContext): AskPayments =>
    (operation, path, params) =>
      payments(
        operation,
        { livemode: false, account: null, path, params },
        {
          requestId: ctx.requestId,
          userId: ctx.session.userId,
        },
      );

  return [
    handle(specs.getBilling, async (ctx) => {
      const merchantId = ctx.session.merchantId;
      const [account, requested, paid, plan] = await Promise.all([
        billingAccount(ctx.sql, merchantId),
        pendingRequest(ctx.sql, merchantId),
        receipts(ctx.sql, merchantId, 50),
        merchantPlan(ctx.sql, merchantId),
      ]);
      return {
        plan: plan!,
        plans: presentPlans(),
        payments: mode,
        period_end: account?.period_end?.toISOString() ?? null,
        card: account?.card_last4 ? { brand: account.card_brand!, last4: account.card_last4 } : null,
        requested: requested ? { plan: requested.to_plan, requested_at: requested.created_at.toISOString() } : null,
        receipts: paid.map(presentReceipt),
        status: account?.status ?? 'active',
        past_due_since: account?.past_due_since?.toISOString() ?? null,
        downgrade_to: account?.downgrade_to ?? null,
      };
    }),
    handle(specs.upgradePlan, async (ctx, { body }) => {
      const row = await upgrade(
        ctx.sql,
        askFor(ctx),
        mode,
        config.RPC_TIMEOUT_MS,
        { merchantId: ctx.session.merchantId, plan: body.plan, attempt: body.attempt, card: body.card },
        ctx.session.email,
      );
      ctx.log.info('plan upgrade', { charge_id: row.id, status: row.status, user_id: ctx.session.userId });
      return {
        status: row.status === 'succeeded' ? ('succeeded' as const) : ('requested' as const),
        plan: row.status === 'succeeded' ? row.to_plan : row.from_plan,
        receipt: row.status === 'succeeded' ? presentReceipt(row) : null,
      };
    }),
    handle(specs.updateCard, async (ctx, { body }) => {
      if (mode !== 'sandbox')
        throw new ApiError('CONFLICT', 'Cards are not taken here: the platform’s operator settles plans with you');
      const merchantId = ctx.session.merchantId;
      const card = testCard(body.card, new Date());
      await saveCard(ctx.sql, merchantId, card);
      const pastDue = await retryPastDue(
        {
          sql: ctx.sql,
          ask: askFor(ctx),
          masterKey: encryptionKey(config),
          baseUrl: config.PUBLIC_BASE_URL,
          log: ctx.log,
          leaseMs: claimLeaseMs(config.RPC_TIMEOUT_MS),
          events: null,
        },
        merchantId,
      );
      ctx.log.info('billing card saved', { merchant_id: merchantId, user_id: ctx.session.userId, past_due: pastDue });
      return {
        card: { brand: card.card_brand, last4: card.card_last4 },
        status: pastDue ? ('past_due' as const) : ('active' as const),
      };
    }),
    handle(specs.downgradePlan, async (ctx, { body }) => {
      const result = await downgrade(ctx.sql, ctx.session.merchantId, body.plan, ctx.session.email);
      return {
        plan: result.plan,
        downgrade_to: result.downgrade_to,
        applies_at: result.applies_at?.toISOString() ?? null,
      };
    }),
  ];
}
