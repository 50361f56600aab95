import type { Queryable } from '@platform/shared/db';
import { unnestColumns } from '@platform/shared/unnest';
import { commissionColumns, type CommissionRow } from './commissions.ts';

/**
 * Refunds and voids of money already on its way (docs/PAYOUTS.md): a void recorded on a commission whose payout is
 * frozen, settled when the payout fails, is canceled or is paid; clawbacks of money paid for commissions voided
 * afterwards, and the adjustments by which later payouts take them back.
 */

/**
 * A payout is frozen, its amount and commissions fixed, once money may be moving or the bank may hold its file:
 * sending, sent, or exported while pending. `p` is the payouts row.
 */
export const frozenPayout = (sql: Queryable) =>
  sql`(p.status in ('sending', 'sent') or (p.status = 'pending' and p.exported_at is not null))`;

/** The commissions (approved, in a frozen payout) get a recorded void instead of a void; answers those recorded. */
export async function requestVoids(
  sql: Queryable,
  merchantId: string,
  ids: string[],
  reason: string,
  at: Date,
): Promise<CommissionRow[]> {
  if (ids.length === 0) return [];
  return sql<CommissionRow[]>`
    update commissions set void_requested_at = ${at}, void_requested_reason = ${reason}
    where merchant_id = ${merchantId} and id in ${sql(ids)} and status = 'approved' and void_requested_at is null
    returning ${commissionColumns(sql)}`;
}

/** A refund of the order: its approved commissions in frozen payouts get a recorded void; answers those. */
export async function requestOrderVoids(
  sql: Queryable,
  merchantId: string,
  orderId: string,
  reason: string,
  at: Date,
): Promise<CommissionRow[]> {
  return sql<CommissionRow[]>`
    update commissions set void_requested_at = ${at}, void_requested_reason = ${reason}
    where merchant_id = ${merchantId} and order_id = ${orderId} and status = 'approved' and void_requested_at is null
      and exists (
        select 1 from payout_commissions pc join payouts p on p.merchant_id = pc.merchant_id and p.id = pc.payout_id
        where pc.merchant_id = commissions.merchant_id and pc.commission_id = commissions.id
          and pc.released_at is null and ${frozenPayout(sql)})
    returning ${commissionColumns(sql)}`;
}

/**
 * The payout failed or was canceled: its commissions with a recorded void are voided (with the reason recorded)
 * rather than released to be paid again. Call before releasing its links.
 */
export async function voidRequestedInPayout(
  sql: Queryable,
  merchantId: string,
  payoutId: string,
  at: Date,
): Promise<CommissionRow[]> {
  return sql<CommissionRow[]>`
    update commissions set status = 'voided', voided_at = ${at}, void_reason = void_requested_reason
    where merchant_id = ${merchantId} and status = 'approved' and void_requested_at is not null and id in (
      select commission_id from payout_commissions
      where merchant_id = ${merchantId} and payout_id = ${payoutId} and released_at is null)
    returning ${commissionColumns(sql)}`;
}

/** A voided commission whose paid money is to be taken back. */
export type ClawedBack = CommissionRow & { clawback_payout_id: string };

/**
 * The payout was paid: its commissions with a recorded void (paid by now) are voided and clawed back. Call after
 * marking its commissions paid.
 */
export async function clawBackRequestedInPayout(
  sql: Queryable,
  merchantId: string,
  payoutId: string,
  at: Date,
): Promise<ClawedBack[]> {
  const rows = await sql<CommissionRow[]>`
    update commissions set status = 'voided', voided_at = ${at}, void_reason = void_requested_reason
    where merchant_id = ${merchantId} and status = 'paid' and void_requested_at is not null and id in (
      select commission_id from payout_commissions
      where merchant_id = ${merchantId} and payout_id = ${payoutId} and released_at is null)
    returning ${commissionColumns(sql)}`;
  const clawed = rows.map((r) => ({ ...r, clawback_payout_id: payoutId }));
  await insertClawbacks(sql, merchantId, clawed, at);
  return clawed;
}

/**
 * A refund of the order after its payout was paid: its paid commissions are voided and clawed back from the
 * affiliate's next payouts.
 */
export async function clawBackPaidOrderCommissions(
  sql: Queryable,
  merchantId: string,
  orderId: string,
  reason: string,
  at: Date,
): Promise<ClawedBack[]> {
  const clawed = await sql<ClawedBack[]>`
    update commissions c set status = 'voided', voided_at = ${at}, void_reason = ${reason}
    from payout_commissions pc join payouts p on p.merchant_id = pc.merchant_id and p.id = pc.payout_id
    where c.merchant_id = ${merchantId} and c.order_id = ${orderId} and c.status = 'paid'
      and pc.merchant_id = c.merchant_id and pc.commission_id = c.id and pc.released_at is null and p.status = 'paid'
    returning ${commissionColumns(sql, 'c')}, p.id as clawback_payout_id`;
  await insertClawbacks(sql, merchantId, clawed, at);
  return clawed;
}

const clawbackColumns = unnestColumns({
  commissionId: (c: ClawedBack) => c.id,
  affiliateId: (c: ClawedBack) => c.affiliate_id,
  payoutId: (c: ClawedBack) => c.clawback_payout_id,
  amount: (c: ClawedBack) => c.amount,
  currency: (c: ClawedBack) => c.currency,
});

async function insertClawbacks(sql: Queryable, merchantId: string, rows: ClawedBack[], at: Date): Promise<void> {
  if (rows.length === 0) return;
  const k = clawbackColumns(rows);
  // The commission was voided in this statement's transaction, so it has no clawback yet; the key is the guard.
  await sql`
    insert into payout_clawbacks (merchant_id, commission_id, affiliate_id, payout_id, amount, currency, created_at)
    select ${merchantId}, k.commission_id, k.affiliate_id, k.payout_id, k.amount::numeric, k.currency, ${at}
    from unnest(${k.commissionId}::text[], ${k.affiliateId}::text[], ${k.payoutId}::text[], ${k.amount}::text[],
                ${k.currency}::text[]) as k(commission_id, affiliate_id, payout_id, amount, currency)
    on conflict (merchant_id, commission_id) do nothing`;
}

/** A clawback still (partly) owed: what remains once the deductions of payouts that did not fail are counted. */
export interface OpenClawback {
  commission_id: string;
  affiliate_id: string;
  currency: string;
  remaining: string;
}

/** The open clawbacks of the affiliates, oldest first (the order later payouts take them back in). */
export async function openClawbacks(
  sql: Queryable,
  merchantId: string,
  affiliateIds: string[],
): Promise<OpenClawback[]> {
  if (affiliateIds.length === 0) return [];
  return sql<OpenClawback[]>`
    select k.commission_id, k.affiliate_id, k.currency, (k.amount - coalesce(d.taken, 0))::text as remaining
    from payout_clawbacks k
    left join lateral (
      select sum(a.amount) as taken from payout_adjustments a
      join payouts p on p.merchant_id = a.merchant_id and p.id = a.payout_id
      where a.merchant_id = k.merchant_id and a.commission_id = k.commission_id
        and p.status not in ('failed', 'canceled')
    ) d on true
    where k.merchant_id = ${merchantId} and k.affiliate_id = any(${affiliateIds}::text[])
      and k.amount > coalesce(d.taken, 0)
    order by k.created_at, k.commission_id`;
}

/** A deduction of a clawback from a new payout. */
export interface NewAdjustment {
  payoutId: string;
  commissionId: string;
  amount: string;
}

const adjustmentColumns = unnestColumns({
  payoutId: (a: NewAdjustment) => a.payoutId,
  commissionId: (a: NewAdjustment) => a.commissionId,
  amount: (a: NewAdjustment) => a.amount,
});

export async function insertAdjustments(
  sql: Queryable,
  merchantId: string,
  adjustments: NewAdjustment[],
  at: Date,
): Promise<void> {
  if (adjustments.length === 0) return;
  const a = adjustmentColumns(adjustments);
  await sql`
    insert into payout_adjustments (merchant_id, payout_id, commission_id, amount, created_at)
    select ${merchantId}, a.payout_id, a.commission_id, a.amount::numeric, ${at}
    from unnest(${a.payoutId}::text[], ${a.commissionId}::text[], ${a.amount}::text[]) as a(payout_id, commission_id, amount)`;
}

/**
 * Pending payouts whose commissions shrank: their deductions are cut, newest first, to what their commissions still
 * sum (a payout never goes below zero); what is cut is owed again, for the next payout.
 */
export async function capAdjustments(sql: Queryable, merchantId: string, payoutIds: string[]): Promise<void> {
  await sql`
    with gross as (
      select ids.id as payout_id, coalesce(sum(c.amount), 0) as gross
      from unnest(${payoutIds}::text[]) as ids(id)
      left join payout_commissions pc on pc.merchant_id = ${merchantId} and pc.payout_id = ids.id and pc.released_at is null
      left join commissions c on c.merchant_id = pc.merchant_id and c.id = pc.commission_id
      group by ids.id
    ), ranked as (
      select a.payout_id, a.commission_id, a.amount, g.gross,
        coalesce(sum(a.amount) over (partition by a.payout_id order by a.created_at, a.commission_id
                                     rows between unbounded preceding and 1 preceding), 0) as before
      from payout_adjustments a join gross g on g.payout_id = a.payout_id
      where a.merchant_id = ${merchantId}
    ), capped as (
      select payout_id, commission_id, greatest(gross - before, 0) as keep from ranked where before + amount > gross
    ), removed as (
      delete from payout_adjustments a using capped k
      where a.merchant_id = ${merchantId} and a.payout_id = k.payout_id and a.commission_id = k.commission_id
        and k.keep = 0
    )
    update payout_adjustments a set amount = k.keep from capped k
    where a.merchant_id = ${merchantId} and a.payout_id = k.payout_id and a.commission_id = k.commission_id
      and k.keep > 0`;
}

/** A commission's clawback as the API shows it. */
export interface ClawbackRow {
  commission_id: string;
  payout_id: string;
  amount: string;
  currency: string;
  recovered: string;
  created_at: Date;
}

/** The clawbacks of the commissions that have one, with how much later payouts have taken back so far. */
export async function clawbacksOf(
  sql: Queryable,
  merchantId: string,
  commissionIds: string[],
): Promise<Map<string, ClawbackRow>> {
  if (commissionIds.length === 0) return new Map();
  const rows = await sql<ClawbackRow[]>`
    select k.commission_id, k.payout_id, k.amount::text as amount, k.currency, k.created_at,
      coalesce((
        select sum(a.amount) from payout_adjustments a
        join payouts p on p.merchant_id = a.merchant_id and p.id = a.payout_id
        where a.merchant_id = k.merchant_id and a.commission_id = k.commission_id
          and p.status not in ('failed', 'canceled')), 0)::text as recovered
    from payout_clawbacks k
    where k.merchant_id = ${merchantId} and k.commission_id = any(${commissionIds}::text[])`;
  return new Map(rows.map((r) => [r.commission_id, r]));
}

/**
 * Locks the order's commissions, then the open payouts holding them (the lock order of payout moves), so that a
 * refund decides void, recorded void or clawback against payouts no export or move changes meanwhile.
 */
export async function lockOrderPayouts(sql: Queryable, merchantId: string, orderId: string): Promise<void> {
  await sql`
    select id from commissions where merchant_id = ${merchantId} and order_id = ${orderId} order by id for update`;
  await sql`
    select p.id from payouts p
    where p.merchant_id = ${merchantId} and p.id in (
      select pc.payout_id from payout_commissions pc join commissions c on c.merchant_id = pc.merchant_id and c.id = pc.commission_id
      where pc.merchant_id = ${merchantId} and c.order_id = ${orderId} and pc.released_at is null)
    order by p.id
    for update of p`;
}
