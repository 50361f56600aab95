import { changePlanIn } from '@platform/shared/api-keys';
import { encryptionKey } from '@platform/shared/config';
import type { Queryable, Sql } from '@platform/shared/db';
import { ApiError } from '@platform/shared/errors';
import { newId } from '@platform/shared/ids';
import type { Logger } from '@platform/shared/log';
import { recordBillingEvent } from '@platform/shared/billing-events';
import { composeMail, enqueueMail } from '@platform/shared/mail';
import { addMonth, PLAN_CATALOGUE, PLANS, type Plan } from '@platform/shared/plans';
import type { Worker } from '@platform/shared/service';
import type { GatewayConfig } from '../../config.ts';
import type { Requester } from '../../http/requester.ts';
import { chargeClaim, claimLeaseMs, pay, type AskPayments } from './billing-charge.ts';
import { deliverBillingEvents, type BillingWebhookTarget } from './billing-events.ts';
import { createPaymentsCaller } from './payments.ts';
import { claimInFlight, insertClaim, leaseClaim, settleClaim, type ChargeRow } from './queries/billing.ts';
import { lockMerchant, lockMerchantPlan, merchantPlan } from './queries/plans.ts';
import {
  accountStatus,
  dueAccounts,
  endBillingPeriod,
  endUnpaidMonth,
  lockAccountAsRead,
  lockAccountMonth,
  markPastDue,
  pastDueAccount,
  plansPaidSince,
  renewMonth,
  scheduleDowngrade,
  takeDowngrade,
  type DueRow,
} from './queries/renewals.ts';
import { ownerEmails } from './queries/team.ts';

/**
 * Monthly renewals (docs/BILLING.md). Every gateway replica runs the job; each due renewal is claimed once, as a
 * billing_charges row whose attempt names the month and the day of the try, so replicas (and a pass that overlaps
 * the last) never charge a month twice. When a month ends: a downgrade asked for applies first; a plan that costs
 * nothing (or is sold by contract) ends the billing; otherwise its price is charged to the saved card. Declined, the
 * merchant is `past_due` (its owners mailed), keeps the plan and is tried again once a day; after GRACE_DAYS it
 * moves to the highest plan it paid for within the unpaid month, or Free, and what that plan does not allow answers
 * 402 PLAN_REQUIRED.
 */
export const GRACE_DAYS = 7;
const DAY_MS = 86_400_000;
const RENEW_EVERY_MS = 10_000;

export interface RenewalDeps {
  sql: Sql;
  ask: AskPayments;
  /** Encrypts the mails (ENCRYPTION_KEY). */
  masterKey: Buffer;
  /** Where the mails' links point (PUBLIC_BASE_URL). */
  baseUrl: string;
  log: Logger;
  leaseMs: number;
  /** The operator's endpoint for billing events, when configured. */
  events: BillingWebhookTarget | null;
}

/** One pass: every account whose month has ended, oldest first. Answers how many were looked at. */
export async function renewDue(deps: RenewalDeps, now = new Date()): Promise<number> {
  const due = await dueAccounts(deps.sql, now, 200);
  for (const row of due) {
    try {
      await renewOne(deps, row, now);
    } catch (err) {
      deps.log.warn('renewal failed; the next pass tries again', { err: err as Error, merchant_id: row.merchant_id });
    }
  }
  return due.length;
}

/**
 * The unpaid month of a past-due merchant tried again now (its card just changed), as the day's try would be; once a
 * day this way (`try` names it). Answers whether the account is still past due.
 */
export async function retryPastDue(deps: RenewalDeps, merchantId: string, now = new Date()): Promise<boolean> {
  const row = await pastDueAccount(deps.sql, merchantId, now);
  if (!row) return false;
  await renewOne(deps, row, now, 'card');
  return (await accountStatus(deps.sql, merchantId)) === 'past_due';
}

async function renewOne(deps: RenewalDeps, row: DueRow, now: Date, tryName = ''): Promise<void> {
  const { sql } = deps;
  const merchantId = row.merchant_id;
  // A claim in flight (an upgrade's, or an earlier try of this renewal) is finished before anything else, once its
  // maker's lease has run out: the account then moves on from what it paid, and a stopped maker blocks nothing.
  const open = await claimInFlight(sql, merchantId);
  if (open) return finishAbandoned(deps, row, open, now);
  const plan = row.status === 'active' && row.downgrade_to ? row.downgrade_to : row.plan;
  const price = PLAN_CATALOGUE[plan].price;
  if (row.status === 'active' && row.downgrade_to) await applyPlan(sql, merchantId, row.period_end, plan, 'downgrade');
  if (!price || price.amount === 0) return endBilling(sql, merchantId, row.period_end);
  if (row.status === 'past_due' && now.getTime() - row.past_due_since!.getTime() >= GRACE_DAYS * DAY_MS)
    return fallBack(deps, row);

  const day = Math.floor((now.getTime() - row.period_end.getTime()) / DAY_MS);
  let claim: ChargeRow | undefined;
  try {
    claim = await sql.begin(async (tx) => {
      // The merchant first, as every plan change locks it, then the account as this pass read it: an upgrade or a
      // downgrade since (a new month, another plan) means this month is no longer the one to charge.
      const lockedPlan = await lockMerchantPlan(tx, merchantId);
      const still = await lockAccountAsRead(tx, merchantId, row.period_end, row.status);
      if (!still || lockedPlan !== plan) return undefined;
      return insertClaim(
        tx,
        merchantId,
        {
          id: newId('bch'),
          attempt: `${RENEWAL}${row.period_end.toISOString()}:${day}${tryName}`,
          from_plan: plan,
          to_plan: plan,
          amount: String(price.amount),
          currency: price.currency,
          status: 'claimed',
          payment_method: row.payment_method,
          card_brand: row.card_brand,
          card_last4: row.card_last4,
        },
        deps.leaseMs,
        'renewal',
      );
    });
  } catch (err) {
    // Today's try claimed already, by this replica or another: that one charges it.
    if ((err as { code?: string }).code !== '23505') throw err;
    return;
  }
  if (!claim) return;
  await chargeRenewal(deps, row, claim, now);
}

/** A claim whose maker stopped, taken over (one taker wins) and finished: an upgrade as upgrades are, or a renewal. */
async function finishAbandoned(deps: RenewalDeps, row: DueRow, open: ChargeRow, now: Date): Promise<void> {
  if (!(await leaseClaim(deps.sql, row.merchant_id, open.id, deps.leaseMs))) return;
  if (open.kind === 'renewal') return chargeRenewal(deps, { ...row, period_end: renewedPeriodEnd(open) }, open, now);
  try {
    await chargeClaim(deps.sql, deps.ask, open, now, 'billing');
  } catch (err) {
    // Declined: settled so, the plan unchanged. The account's month is renewed at the next pass.
    if (!(err instanceof ApiError && err.code === 'INVALID_INPUT')) throw err;
  }
}

/** The month a renewal claim renews, from its attempt ('renewal:<period_end>:<day>'). */
const renewedPeriodEnd = (claim: ChargeRow) =>
  new Date(claim.attempt.slice(RENEWAL.length, claim.attempt.lastIndexOf(':')));
const RENEWAL = 'renewal:';

/** Charges a renewal's claim; paid, the month moves on (only from the month the claim renews). */
async function chargeRenewal(deps: RenewalDeps, row: DueRow, claim: ChargeRow, now: Date): Promise<void> {
  const { sql } = deps;
  const merchantId = row.merchant_id;
  if (!claim.payment_method) return declined(deps, row, claim, 'No card is saved', now);
  try {
    await pay(sql, deps.ask, claim);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'INVALID_INPUT') return declined(deps, row, claim, err.message, now);
    throw err;
  }
  await sql.begin(async (tx) => {
    if (!(await settleClaim(tx, merchantId, claim.id, 'succeeded', null))) return;
    await renewMonth(tx, merchantId, row.period_end, addMonth(row.period_end));
    await recordBillingEvent(tx, merchantId, 'plan.renewed', {
      charge_id: claim.id,
      plan: claim.to_plan,
      amount: Number(claim.amount),
      currency: claim.currency,
      period_end: addMonth(row.period_end).toISOString(),
    });
  });
  deps.log.info('plan renewed', { merchant_id: merchantId, charge_id: claim.id, plan: claim.to_plan });
}

/** A renewal declined: the claim settled so, the merchant past_due from its first decline (its owners told then). */
async function declined(deps: RenewalDeps, row: DueRow, claim: ChargeRow, reason: string, now: Date) {
  await deps.sql.begin(async (tx) => {
    await settleClaim(tx, row.merchant_id, claim.id, 'declined', reason);
    const became = await markPastDue(tx, row.merchant_id, now);
    if (became) await recordBillingEvent(tx, row.merchant_id, 'plan.past_due', { charge_id: claim.id, plan: row.plan });
    if (became)
      await mailOwners(deps, tx, row.merchant_id, 'Your payment was declined', [
        `We could not renew your ${PLAN_CATALOGUE[row.plan].name} plan: ${reason} Your plan stays for ${GRACE_DAYS} days while we try again each day; update your card on the Plan page.`,
        `After ${GRACE_DAYS} days without payment the account moves to the Free plan, and API keys stop working.`,
      ]);
  });
  deps.log.info('renewal declined', { merchant_id: row.merchant_id, charge_id: claim.id });
}

/** Past the grace: the highest plan paid for within the unpaid month (an upgrade paid since), else Free. */
async function fallBack(deps: RenewalDeps, row: DueRow) {
  await deps.sql.begin(async (tx) => {
    await lockMerchant(tx, row.merchant_id); // first, as billing-charge.ts says
    const paid = await plansPaidSince(tx, row.merchant_id, row.period_end);
    const plan = paid.reduce<Plan>((a, b) => (PLANS.indexOf(b) > PLANS.indexOf(a) ? b : a), 'free');
    if (!(await endUnpaidMonth(tx, row.merchant_id, row.period_end))) return;
    await changePlanIn(tx, row.merchant_id, plan, 'billing');
    await recordBillingEvent(tx, row.merchant_id, 'plan.downgraded', {
      from_plan: row.plan,
      to_plan: plan,
      reason: 'unpaid',
    });
    await mailOwners(deps, tx, row.merchant_id, `Your account is now on the ${PLAN_CATALOGUE[plan].name} plan`, [
      `Your ${PLAN_CATALOGUE[row.plan].name} plan was not paid for ${GRACE_DAYS} days, so the account is now on ${PLAN_CATALOGUE[plan].name}.`,
      'Upgrade again on the Plan page whenever you like.',
    ]);
    deps.log.info('unpaid plan ended', { merchant_id: row.merchant_id, from: row.plan, plan });
  });
}

/** A downgrade asked for applies when the paid month ends. */
async function applyPlan(sql: Sql, merchantId: string, periodEnd: Date, plan: Plan, why: string) {
  await sql.begin(async (tx) => {
    await lockMerchant(tx, merchantId); // first, as billing-charge.ts says
    if (!(await takeDowngrade(tx, merchantId, periodEnd, plan))) return;
    const from = await merchantPlan(tx, merchantId);
    await changePlanIn(tx, merchantId, plan, `billing ${why}`);
    await recordBillingEvent(tx, merchantId, 'plan.downgraded', { from_plan: from!, to_plan: plan, reason: why });
  });
}

/** Nothing more to charge (Free, or a plan sold by contract): the account keeps its card and has no month running. */
const endBilling = async (sql: Queryable, merchantId: string, periodEnd: Date) => {
  await endBillingPeriod(sql, merchantId, periodEnd);
};

async function mailOwners(deps: RenewalDeps, tx: Queryable, merchantId: string, subject: string, paragraphs: string[]) {
  const owners = await ownerEmails(tx, merchantId);
  const content = composeMail(paragraphs, {
    url: `${deps.baseUrl}/dashboard/settings/plan`,
    label: 'Open the Plan page',
  });
  for (const to of owners) await enqueueMail(tx, deps.masterKey, { merchantId, kind: 'billing', to, subject, content });
}

/** What the job needs, from the gateway's own pool, NATS requester and configuration. */
export function renewalDeps(sql: Sql, requester: Requester, config: GatewayConfig, log: Logger): RenewalDeps {
  const payments = createPaymentsCaller(requester, config.NATS_PREFIX, config.RPC_TIMEOUT_MS);
  return {
    sql,
    // The platform's own account in test mode, as upgrades are paid (routes-billing.ts).
    ask: (operation, path, params) =>
      payments(
        operation,
        { livemode: false, account: null, path, params },
        { requestId: newId('req'), userId: 'billing' },
      ),
    masterKey: encryptionKey(config),
    baseUrl: config.PUBLIC_BASE_URL,
    log,
    leaseMs: claimLeaseMs(config.RPC_TIMEOUT_MS),
    events: config.BILLING_WEBHOOK_URL
      ? { url: config.BILLING_WEBHOOK_URL, secret: config.BILLING_WEBHOOK_SECRET! }
      : null,
  };
}

/** The job: a pass at start and every 10 s (renewals, then the billing events), never two at once in a process. */
export function startBillingRenewals(deps: RenewalDeps): Worker {
  let running: Promise<unknown> | null = null;
  const run = () => {
    running ??= renewDue(deps)
      .then(() => deps.events && deliverBillingEvents(deps.sql, deps.events, deps.log))
      .catch((err: unknown) => deps.log.warn('renewal pass failed; the next one retries', { err: err as Error }))
      .finally(() => {
        running = null;
      });
  };
  run();
  const timer = setInterval(run, RENEW_EVERY_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      if (running) await running;
    },
  };
}

/**
 * A downgrade: with a paid month running it applies when the month ends (what was paid for is kept until then);
 * without one (Free, a plan the operator set) at once. The current plan asked for cancels a downgrade scheduled.
 */
export async function downgrade(
  sql: Sql,
  merchantId: string,
  plan: Plan,
  actor: string,
): Promise<{ plan: Plan; downgrade_to: Plan | null; applies_at: Date | null }> {
  return sql.begin(async (tx) => {
    const current = await lockMerchantPlan(tx, merchantId);
    if (!current) throw new ApiError('NOT_FOUND', 'No such merchant');
    if (PLANS.indexOf(plan) > PLANS.indexOf(current))
      throw new ApiError('CONFLICT', `${PLAN_CATALOGUE[plan].name} is above your plan: upgrade instead`);
    const account = await lockAccountMonth(tx, merchantId);
    // Without a month running (Free, a plan the operator set), or past due (the month ended unpaid: nothing paid is
    // kept until a month's end), the downgrade applies at once, and the retries charge the lower plan, or none.
    if (!account?.period_end || account.status === 'past_due') {
      if (plan !== current) {
        await changePlanIn(tx, merchantId, plan, actor);
        await recordBillingEvent(tx, merchantId, 'plan.downgraded', {
          from_plan: current,
          to_plan: plan,
          reason: 'asked',
        });
      }
      if (account?.period_end) {
        await scheduleDowngrade(tx, merchantId, null);
        if (!PLAN_CATALOGUE[plan].price?.amount) await endBilling(tx, merchantId, account.period_end);
      }
      return { plan, downgrade_to: null, applies_at: null };
    }
    const to = plan === current ? null : plan;
    await scheduleDowngrade(tx, merchantId, to);
    return { plan: current, downgrade_to: to, applies_at: to ? account.period_end : null };
  });
}
