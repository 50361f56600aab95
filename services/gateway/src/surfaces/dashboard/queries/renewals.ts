import type { Queryable, Sql } from '@platform/shared/db';
import type { Plan } from '@platform/shared/plans';
import type { BillingAccountRow } from './billing.ts';

/** A billing account whose month has ended, with its merchant's plan. */
export interface DueRow extends Omit<BillingAccountRow, 'period_start' | 'period_end'> {
  merchant_id: string;
  plan: Plan;
  period_end: Date;
}

/** The accounts whose month ended by `now`, oldest first. */
export const dueAccounts = (sql: Sql, now: Date, limit: number) => sql<DueRow[]>`
  select b.merchant_id, m.plan, b.period_end, b.status, b.past_due_since, b.downgrade_to, b.payment_method,
    b.card_brand, b.card_last4
  from billing_accounts b join merchants m on m.id = b.merchant_id
  where b.period_end <= ${now} order by b.period_end limit ${limit}`;

/** The merchant's account, when it is past due with its month ended by `now`. */
export async function pastDueAccount(sql: Sql, merchantId: string, now: Date): Promise<DueRow | undefined> {
  const [row] = await sql<DueRow[]>`
    select b.merchant_id, m.plan, b.period_end, b.status, b.past_due_since, b.downgrade_to, b.payment_method,
      b.card_brand, b.card_last4
    from billing_accounts b join merchants m on m.id = b.merchant_id
    where b.merchant_id = ${merchantId} and b.status = 'past_due' and b.period_end <= ${now}`;
  return row;
}

export async function accountStatus(sql: Sql, merchantId: string): Promise<string | undefined> {
  const [row] = await sql<{ status: string }[]>`
    select status from billing_accounts where merchant_id = ${merchantId}`;
  return row?.status;
}

/** Locks the account while it is still in the month and status a pass read; false when it has moved on since. */
export async function lockAccountAsRead(
  tx: Queryable,
  merchantId: string,
  periodEnd: Date,
  status: 'active' | 'past_due',
): Promise<boolean> {
  const [still] = await tx`
    select 1 from billing_accounts where merchant_id = ${merchantId} and period_end = ${periodEnd}
      and status = ${status} for update`;
  return Boolean(still);
}

/** The month ending `periodEnd` paid: the next one runs to `nextEnd`, the account active. */
export const renewMonth = (tx: Queryable, merchantId: string, periodEnd: Date, nextEnd: Date) => tx`
  update billing_accounts set period_start = period_end, period_end = ${nextEnd},
    status = 'active', past_due_since = null, updated_at = date_trunc('milliseconds', now())
  where merchant_id = ${merchantId} and period_end = ${periodEnd}`;

/** An active account past due from `now`; false when it was past due already (or is gone). */
export async function markPastDue(tx: Queryable, merchantId: string, now: Date): Promise<boolean> {
  const [became] = await tx`
    update billing_accounts set status = 'past_due', past_due_since = ${now},
      updated_at = date_trunc('milliseconds', now())
    where merchant_id = ${merchantId} and status = 'active' returning merchant_id`;
  return Boolean(became);
}

/** The plans the merchant paid for since `since` (upgrades that succeeded). */
export async function plansPaidSince(tx: Queryable, merchantId: string, since: Date): Promise<Plan[]> {
  const paid = await tx<{ to_plan: Plan }[]>`
    select to_plan from billing_charges
    where merchant_id = ${merchantId} and status = 'succeeded' and created_at >= ${since}`;
  return paid.map((p) => p.to_plan);
}

/** The unpaid month ending `periodEnd` given up: no month running; false when the account has moved on. */
export async function endUnpaidMonth(tx: Queryable, merchantId: string, periodEnd: Date): Promise<boolean> {
  const [moved] = await tx`
    update billing_accounts set status = 'active', past_due_since = null, period_start = null, period_end = null,
      downgrade_to = null, updated_at = date_trunc('milliseconds', now())
    where merchant_id = ${merchantId} and status = 'past_due' and period_end = ${periodEnd}
    returning merchant_id`;
  return Boolean(moved);
}

/** Takes the downgrade to `plan` scheduled for the month ending `periodEnd`; false when there is none. */
export async function takeDowngrade(tx: Queryable, merchantId: string, periodEnd: Date, plan: Plan): Promise<boolean> {
  const [applied] = await tx`
    update billing_accounts set downgrade_to = null where merchant_id = ${merchantId}
      and period_end = ${periodEnd} and downgrade_to = ${plan} returning merchant_id`;
  return Boolean(applied);
}

/** No month running any more (the card is kept). */
export const endBillingPeriod = (sql: Queryable, merchantId: string, periodEnd: Date) =>
  sql`update billing_accounts set period_start = null, period_end = null, status = 'active',
    past_due_since = null where merchant_id = ${merchantId} and period_end = ${periodEnd}`;

/** The account's month and status, its row locked until the transaction ends. */
export async function lockAccountMonth(
  tx: Queryable,
  merchantId: string,
): Promise<{ period_end: Date | null; status: 'active' | 'past_due' } | undefined> {
  const [account] = await tx<{ period_end: Date | null; status: 'active' | 'past_due' }[]>`
    select period_end, status from billing_accounts where merchant_id = ${merchantId} for update`;
  return account;
}

/** Schedules a downgrade to `to` at the month's end; null cancels the one scheduled. */
export const scheduleDowngrade = (tx: Queryable, merchantId: string, to: Plan | null) =>
  tx`update billing_accounts set downgrade_to = ${to}, updated_at = date_trunc('milliseconds', now())
    where merchant_id = ${merchantId}`;
