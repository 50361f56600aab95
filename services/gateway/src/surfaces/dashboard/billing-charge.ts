import { changePlanIn } from '@platform/shared/api-keys';
import { recordBillingEvent } from '@platform/shared/billing-events';
import type { Sql } from '@platform/shared/db';
import { ApiError } from '@platform/shared/errors';
import { newId } from '@platform/shared/ids';
import { isUpgrade, PLAN_CATALOGUE, upgradeCharge, type Plan } from '@platform/shared/plans';
import {
  billingAccount,
  claimInFlight,
  findAttempt,
  insertClaim,
  leaseClaim,
  lockPaidPeriod,
  recordIntent,
  saveBillingAccount,
  settleClaim,
  type ChargeRow,
} from './queries/billing.ts';
import { lockMerchant, lockMerchantPlan } from './queries/plans.ts';

/**
 * An upgrade, paid on the platform's own account of the payments service (docs/BILLING.md). Every attempt is
 * claimed (a billing_charges row, keyed by the client's `attempt`) before anything is asked of the payments
 * service, so that the same attempt sent again (a double submit, a retry after a lost answer) replays its outcome or
 * resumes its claim, and never charges a second time; a merchant has one attempt in flight at most (a unique index),
 * so two upgrades racing make one charge. The payment intent is created, recorded on the claim, then confirmed: a
 * claim resumed after its maker stopped confirms that same intent (or makes one, when none was recorded: an intent
 * never confirmed moved no money).
 */

/** The payment service operations the upgrade asks for, on the platform's own account in test mode (sandbox). */
export type AskPayments = <T>(
  operation: string,
  path: Record<string, string>,
  params: Record<string, unknown>,
) => Promise<T>;

interface Intent {
  id: string;
  status: string;
  last_payment_error?: { message?: string } | null;
}

/** The sandbox's test cards, by number: what the payments service charges for each (docs/PAYMENTS.md). */
const TEST_CARDS: Record<string, { payment_method: string; card_brand: string }> = {
  '4242424242424242': { payment_method: 'pm_card_visa', card_brand: 'visa' },
  '5555555555554444': { payment_method: 'pm_card_mastercard', card_brand: 'mastercard' },
  '4000000000000002': { payment_method: 'pm_card_chargeDeclined', card_brand: 'visa' },
  '4000000000009995': { payment_method: 'pm_card_chargeDeclinedInsufficientFunds', card_brand: 'visa' },
};

/** How long a claim is its maker's: past it a retry of the same attempt takes the claim over and resumes it. */
export const claimLeaseMs = (rpcTimeoutMs: number) => 3 * rpcTimeoutMs + 1000;

export interface UpgradeRequest {
  merchantId: string;
  plan: Plan;
  attempt: string;
  card?: { number: string; expiry: string; cvc: string };
}

const refused = (path: string, message: string) => new ApiError('INVALID_INPUT', message, [{ path, message }]);

/** A card of the form: a sandbox test card that has not expired, or the refusal naming the field. */
export function testCard(card: NonNullable<UpgradeRequest['card']>, now: Date) {
  const [month, year] = card.expiry.split('/').map(Number) as [number, number];
  if (Date.UTC(2000 + year, month) <= now.getTime()) throw refused('card.expiry', 'The card has expired');
  const number = card.number.replace(/ /g, '');
  const known = TEST_CARDS[number];
  if (!known)
    throw refused('card.number', 'Use a test card: 4242 4242 4242 4242 is charged, 4000 0000 0000 0002 is declined');
  return { ...known, card_last4: number.slice(-4) };
}

/** Answers an attempt that has its outcome: the same as when it was made. */
function replay(row: ChargeRow): ChargeRow {
  if (row.status === 'declined') throw refused('card.number', row.failure ?? 'Your card was declined.');
  return row;
}

export async function upgrade(
  sql: Sql,
  ask: AskPayments,
  mode: 'sandbox' | 'approval',
  rpcTimeoutMs: number,
  request: UpgradeRequest,
  actor: string,
  now = new Date(),
  retried = false,
): Promise<ChargeRow> {
  const { merchantId } = request;
  const lease = claimLeaseMs(rpcTimeoutMs);
  const earlier = await findAttempt(sql, merchantId, request.attempt);
  if (earlier) return resumeOrReplay(sql, ask, lease, earlier, actor);
  if (PLAN_CATALOGUE[request.plan].price === null)
    throw new ApiError('CONFLICT', `${PLAN_CATALOGUE[request.plan].name} is sold by contract: contact us`);
  const card = mode === 'sandbox' ? await cardFor(sql, request, now) : null;
  let claim: ChargeRow;
  try {
    claim = await sql.begin(async (tx) => {
      const plan = await lockMerchantPlan(tx, merchantId);
      if (!plan) throw new ApiError('NOT_FOUND', 'No such merchant');
      if (!isUpgrade(plan, request.plan))
        throw new ApiError(
          'CONFLICT',
          `The merchant is on ${PLAN_CATALOGUE[plan].name}: ${PLAN_CATALOGUE[request.plan].name} is not an upgrade`,
        );
      const account = await billingAccount(tx, merchantId);
      const period = account?.period_start ? { start: account.period_start, end: account.period_end! } : null;
      const charge = upgradeCharge(plan, request.plan, period, now);
      const claimed = await insertClaim(
        tx,
        merchantId,
        {
          id: newId('bch'),
          attempt: request.attempt,
          from_plan: plan,
          to_plan: request.plan,
          amount: String(charge.amount),
          currency: charge.currency,
          status: mode === 'sandbox' ? 'claimed' : 'requested',
          payment_method: card?.payment_method ?? null,
          card_brand: card?.card_brand ?? null,
          card_last4: card?.card_last4 ?? null,
          period: charge.period,
        },
        lease,
      );
      if (claimed.status === 'requested')
        await recordBillingEvent(tx, merchantId, 'plan.upgrade_requested', {
          charge_id: claimed.id,
          from_plan: claimed.from_plan,
          to_plan: claimed.to_plan,
        });
      return claimed;
    });
  } catch (err) {
    if ((err as { code?: string }).code !== '23505') throw err;
    // The same attempt inserted by a concurrent request (a double submit) is that request's; another attempt in
    // flight is another upgrade.
    const same = await findAttempt(sql, merchantId, request.attempt);
    if (same) return resumeOrReplay(sql, ask, lease, same, actor);
    // Another attempt's claim, abandoned by its maker (a page reloaded after a timeout, a gateway stopped): finished
    // here, once, so that it never blocks the account. Asked for the same plan, its outcome is this one's too.
    const abandoned = await takeAbandonedUpgrade(sql, merchantId, lease);
    if (abandoned) {
      const finished = await chargeClaim(sql, ask, abandoned, new Date(), actor).catch((declined: unknown) => {
        if (declined instanceof ApiError && declined.code === 'INVALID_INPUT') return undefined;
        throw declined;
      });
      if (finished && finished.to_plan === request.plan) return finished;
      if (!retried) return upgrade(sql, ask, mode, rpcTimeoutMs, request, actor, now, true);
    }
    throw new ApiError(
      'CONFLICT',
      'Another upgrade of this account is in progress; try again when it has finished',
      undefined,
      { cause: err },
    );
  }
  if (claim.status === 'requested') return claim;
  return chargeClaim(sql, ask, claim, now, actor);
}

/** The card to charge: the one entered (a test card in the sandbox), or the saved one. */
async function cardFor(sql: Sql, request: UpgradeRequest, now: Date) {
  if (request.card) return testCard(request.card, now);
  const saved = await billingAccount(sql, request.merchantId);
  if (!saved?.payment_method) throw refused('card.number', 'Enter a card to pay with');
  return { payment_method: saved.payment_method, card_brand: saved.card_brand!, card_last4: saved.card_last4! };
}

async function resumeOrReplay(sql: Sql, ask: AskPayments, lease: number, row: ChargeRow, actor: string) {
  if (row.status !== 'claimed') return replay(row);
  if (!(await leaseClaim(sql, row.merchant_id, row.id, lease)))
    throw new ApiError('CONFLICT', 'This upgrade is being paid; its outcome shows here in a moment');
  return chargeClaim(sql, ask, row, new Date(), actor);
}

/**
 * The upgrade claim in flight whose lease has run out, taken over (one taker wins), or undefined. A renewal's is the
 * renewal job's to finish (billing-renewals.ts).
 */
async function takeAbandonedUpgrade(sql: Sql, merchantId: string, lease: number): Promise<ChargeRow | undefined> {
  const open = await claimInFlight(sql, merchantId);
  if (!open || open.kind !== 'upgrade') return undefined;
  return (await leaseClaim(sql, merchantId, open.id, lease)) ? open : undefined;
}

/** Charges an upgrade's claim (made now, or taken over) and writes its outcome with the plan change, in one transaction. */
export async function chargeClaim(
  sql: Sql,
  ask: AskPayments,
  claim: ChargeRow,
  now: Date,
  actor: string,
): Promise<ChargeRow> {
  const merchantId = claim.merchant_id;
  if (Number(claim.amount) > 0) await pay(sql, ask, claim);
  const settled = await sql.begin(async (tx) => {
    // The merchant first, as every transaction that changes a plan locks it: a claim being made waits on it, so that
    // it never waits on this transaction's claim row while this one waits on the merchant (a deadlock).
    await lockMerchant(tx, merchantId);
    const row = await settleClaim(tx, merchantId, claim.id, 'succeeded', null);
    if (!row) return undefined;
    // The period the amount was prorated for, kept on the claim: a claim finished after its month ended still buys
    // what it was priced for, not a new month. (Claims from before migration 053 work it out as then.)
    const account = await lockPaidPeriod(tx, merchantId);
    const current = account?.period_start ? { start: account.period_start, end: account.period_end! } : null;
    const paid =
      claim.period_start && claim.period_end
        ? { start: claim.period_start, end: claim.period_end }
        : upgradeCharge(claim.from_plan, claim.to_plan, current, now).period;
    await saveBillingAccount(
      tx,
      merchantId,
      { payment_method: claim.payment_method!, card_brand: claim.card_brand!, card_last4: claim.card_last4! },
      paid,
    );
    await changePlanIn(tx, merchantId, claim.to_plan, actor);
    await recordBillingEvent(tx, merchantId, 'plan.upgraded', {
      charge_id: row.id,
      from_plan: row.from_plan,
      to_plan: row.to_plan,
      amount: Number(row.amount),
      currency: row.currency,
      payment_intent: row.payment_intent,
    });
    return row;
  });
  // Settled by a concurrent resumer first: its outcome is this attempt's.
  return settled ?? replay((await findAttempt(sql, merchantId, claim.attempt))!);
}

/** Takes the claim's amount from its card: returns once paid; a decline settles the claim and throws. */
export async function pay(sql: Sql, ask: AskPayments, claim: ChargeRow): Promise<void> {
  const merchantId = claim.merchant_id;
  let intent = claim.payment_intent
    ? await ask<Intent>('retrieve_payment_intent', { id: claim.payment_intent }, {})
    : await ask<Intent>(
        'create_payment_intent',
        {},
        {
          amount: claim.amount,
          currency: claim.currency,
          payment_method: claim.payment_method,
          description: `Plan ${claim.from_plan} to ${claim.to_plan}`,
          metadata: { merchant_id: merchantId, billing_charge: claim.id },
        },
      );
  if (!claim.payment_intent) await recordIntent(sql, merchantId, claim.id, intent.id);
  if (intent.status === 'requires_confirmation') {
    try {
      intent = await ask<Intent>('confirm_payment_intent', { id: intent.id }, {});
    } catch (err) {
      // A refusal of the card (the payments service's 402, or a parameter it refused): the attempt is declined,
      // the plan unchanged. Anything else (no answer) leaves the claim for a retry of the attempt to resume.
      if (!(err instanceof ApiError && err.code === 'INVALID_INPUT')) throw err;
      await settleClaim(sql, merchantId, claim.id, 'declined', err.message);
      throw refused('card.number', err.message);
    }
  }
  if (intent.status === 'requires_payment_method') {
    const message = intent.last_payment_error?.message ?? 'Your card was declined.';
    await settleClaim(sql, merchantId, claim.id, 'declined', message);
    throw refused('card.number', message);
  }
  if (intent.status !== 'succeeded')
    throw new ApiError('CONFLICT', 'This upgrade is being paid; its outcome shows here in a moment');
}
