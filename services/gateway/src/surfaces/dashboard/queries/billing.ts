import type { Queryable, Sql } from '@platform/shared/db';
import type { Plan } from '@platform/shared/plans';

/** A merchant's saved card and paid period (migration 050). */
export interface BillingAccountRow {
  status: 'active' | 'past_due';
  past_due_since: Date | null;
  downgrade_to: Plan | null;
  payment_method: string | null;
  card_brand: string | null;
  card_last4: string | null;
  period_start: Date | null;
  period_end: Date | null;
}

/** One upgrade attempt: its claim, then its outcome. */
export interface ChargeRow {
  merchant_id: string;
  id: string;
  attempt: string;
  kind: 'upgrade' | 'renewal';
  from_plan: Plan;
  to_plan: Plan;
  amount: string;
  currency: string;
  status: 'claimed' | 'succeeded' | 'declined' | 'requested' | 'approved';
  payment_method: string | null;
  card_brand: string | null;
  card_last4: string | null;
  payment_intent: string | null;
  failure: string | null;
  /** The period an upgrade's amount was prorated for (migration 053); null for a renewal and older claims. */
  period_start: Date | null;
  period_end: Date | null;
  created_at: Date;
}

const CHARGE =
  'merchant_id, id, attempt, kind, from_plan, to_plan, amount, currency, status, payment_method, card_brand, card_last4, payment_intent, failure, period_start, period_end, created_at';

export const billingAccount = async (sql: Queryable, merchantId: string) =>
  (
    await sql<BillingAccountRow[]>`
      select status, past_due_since, downgrade_to, payment_method, card_brand, card_last4, period_start, period_end
      from billing_accounts where merchant_id = ${merchantId}`
  )[0];

export const findAttempt = async (sql: Queryable, merchantId: string, attempt: string) =>
  (
    await sql<ChargeRow[]>`
      select ${sql.unsafe(CHARGE)} from billing_charges where merchant_id = ${merchantId} and attempt = ${attempt}`
  )[0];

/** The upgrade waiting for the operator's approval, if any. */
export const pendingRequest = async (sql: Queryable, merchantId: string) =>
  (
    await sql<ChargeRow[]>`
      select ${sql.unsafe(CHARGE)} from billing_charges where merchant_id = ${merchantId} and status = 'requested'`
  )[0];

/** The receipts: charges that succeeded, newest first. */
export const receipts = (sql: Sql, merchantId: string, limit: number) =>
  sql<ChargeRow[]>`
    select ${sql.unsafe(CHARGE)} from billing_charges
    where merchant_id = ${merchantId} and status = 'succeeded'
    order by created_at desc, id desc limit ${limit}`;

/** The claim of an attempt, leased to its maker for `leaseMs`; a second in-flight claim fails its unique index. */
export const insertClaim = async (
  tx: Queryable,
  merchantId: string,
  c: Omit<
    ChargeRow,
    'merchant_id' | 'kind' | 'payment_intent' | 'failure' | 'created_at' | 'period_start' | 'period_end'
  > & { period?: { start: Date; end: Date } },
  leaseMs: number,
  kind: 'upgrade' | 'renewal' = 'upgrade',
) =>
  (
    await tx<ChargeRow[]>`
      insert into billing_charges (merchant_id, id, attempt, kind, from_plan, to_plan, amount, currency, status,
        payment_method, card_brand, card_last4, period_start, period_end, leased_until)
      values (${merchantId}, ${c.id}, ${c.attempt}, ${kind}, ${c.from_plan}, ${c.to_plan}, ${c.amount}, ${c.currency},
        ${c.status}, ${c.payment_method}, ${c.card_brand}, ${c.card_last4}, ${c.period?.start ?? null},
        ${c.period?.end ?? null}, now() + ${leaseMs} * interval '1 millisecond')
      returning ${tx.unsafe(CHARGE)}`
  )[0]!;

/** The claim in flight of a merchant (an upgrade's or a renewal's), if any. */
export const claimInFlight = async (sql: Queryable, merchantId: string) =>
  (
    await sql<ChargeRow[]>`
      select ${sql.unsafe(CHARGE)} from billing_charges where merchant_id = ${merchantId} and status = 'claimed'`
  )[0];

/** Takes over a claim whose lease has run out (its maker stopped or gave up); one taker wins. */
export const leaseClaim = async (sql: Sql, merchantId: string, id: string, leaseMs: number) =>
  (
    await sql`
      update billing_charges set leased_until = now() + ${leaseMs} * interval '1 millisecond'
      where merchant_id = ${merchantId} and id = ${id} and status = 'claimed' and leased_until < now()
      returning id`
  ).length === 1;

/** The payment intent made for a claim, recorded before it is confirmed (so a resumed claim confirms that one). */
export const recordIntent = (sql: Sql, merchantId: string, id: string, intentId: string) =>
  sql`update billing_charges set payment_intent = ${intentId}
      where merchant_id = ${merchantId} and id = ${id} and status = 'claimed'`;

/** A claim's outcome, written once: answers the row settled, or undefined when another writer settled it first. */
export const settleClaim = async (
  tx: Queryable,
  merchantId: string,
  id: string,
  status: 'succeeded' | 'declined',
  failure: string | null,
) =>
  (
    await tx<ChargeRow[]>`
      update billing_charges set status = ${status}, failure = ${failure}, settled_at = now()
      where merchant_id = ${merchantId} and id = ${id} and status = 'claimed'
      returning ${tx.unsafe(CHARGE)}`
  )[0];

/**
 * The card paid with and the period paid for, saved for the next charges (renewals, further upgrades). A downgrade
 * scheduled before is cancelled: what was just paid for is the plan from now on.
 */
export const saveBillingAccount = (
  tx: Queryable,
  merchantId: string,
  card: { payment_method: string; card_brand: string; card_last4: string },
  period: { start: Date; end: Date },
) =>
  tx`
    insert into billing_accounts (merchant_id, payment_method, card_brand, card_last4, period_start, period_end)
    values (${merchantId}, ${card.payment_method}, ${card.card_brand}, ${card.card_last4}, ${period.start}, ${period.end})
    on conflict (merchant_id) do update set payment_method = excluded.payment_method,
      card_brand = excluded.card_brand, card_last4 = excluded.card_last4, period_start = excluded.period_start,
      period_end = excluded.period_end, status = 'active', past_due_since = null, downgrade_to = null,
      updated_at = date_trunc('milliseconds', now())`;

/** A card saved without a charge (Settings › Plan's card form), for the next renewal or its retry. */
export const saveCard = (
  sql: Queryable,
  merchantId: string,
  card: { payment_method: string; card_brand: string; card_last4: string },
) =>
  sql`
    insert into billing_accounts (merchant_id, payment_method, card_brand, card_last4)
    values (${merchantId}, ${card.payment_method}, ${card.card_brand}, ${card.card_last4})
    on conflict (merchant_id) do update set payment_method = excluded.payment_method,
      card_brand = excluded.card_brand, card_last4 = excluded.card_last4,
      updated_at = date_trunc('milliseconds', now())`;

/** The account's paid period, its row locked until the transaction ends. */
export async function lockPaidPeriod(
  tx: Queryable,
  merchantId: string,
): Promise<{ period_start: Date | null; period_end: Date | null } | undefined> {
  const [account] = await tx<{ period_start: Date | null; period_end: Date | null }[]>`
    select period_start, period_end from billing_accounts where merchant_id = ${merchantId} for update`;
  return account;
}
