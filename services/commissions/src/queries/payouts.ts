import type { Queryable } from '@platform/shared/db';
import { enqueueEvents } from '@platform/shared/outbox';
import {
  PAYOUT_ADJUSTMENTS_MAX,
  PAYOUT_COMMISSION_IDS_MAX,
  type HeldReason,
  type PayoutStatus,
} from '@platform/shared/schemas/payouts';
import { unnestColumns } from '@platform/shared/unnest';
import type { PayableCommission, PayoutGroup } from '../domain/payouts.ts';
import { commissionEventData } from '../present.ts';
import { capAdjustments, frozenPayout, voidRequestedInPayout } from './clawbacks.ts';
import type { PayoutRow } from './payout-row.ts';

// The row type has a module of its own: present.ts reads it, and this module uses present.ts's event payloads.
export type { PayoutRow };

// commission_count and commission_ids (the first of them) count every commission linked to the payout, released or
// not (failed and canceled payouts keep theirs).
const columns = (sql: Queryable) => sql`
  p.id, p.merchant_id, p.affiliate_id, p.amount::text as amount, p.currency, p.status, p.method, p.reference,
  array(select pc.commission_id from payout_commissions pc
        where pc.merchant_id = p.merchant_id and pc.payout_id = p.id order by pc.commission_id
        limit ${sql.unsafe(String(PAYOUT_COMMISSION_IDS_MAX))}) as commission_ids,
  (select count(*)::int from payout_commissions pc
   where pc.merchant_id = p.merchant_id and pc.payout_id = p.id) as commission_count,
  p.period_start, p.period_end, p.created_at, p.sent_at, p.paid_at, p.failed_at, p.failure_reason, p.held_reason,
  p.exported_at,
  coalesce((select json_agg(json_build_object('commission_id', f.commission_id, 'amount', f.amount::text)
                            order by f.created_at, f.commission_id)
            from (select a.commission_id, a.amount, a.created_at from payout_adjustments a
                  where a.merchant_id = p.merchant_id and a.payout_id = p.id
                  order by a.created_at, a.commission_id
                  limit ${sql.unsafe(String(PAYOUT_ADJUSTMENTS_MAX))}) f), '[]') as adjustments,
  (select count(*)::int from payout_adjustments a
   where a.merchant_id = p.merchant_id and a.payout_id = p.id) as adjustment_count,
  (select coalesce(sum(a.amount), 0)::text from payout_adjustments a
   where a.merchant_id = p.merchant_id and a.payout_id = p.id) as adjustments_amount`;

/**
 * Serialises payout creation per merchant until the transaction ends (the API and the monthly schedule alike), so
 * concurrent requests group each commission once; the unique index on open links is the guard behind it.
 */
export async function lockPayoutCreation(sql: Queryable, merchantId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${'payouts:' + merchantId}, 0))`;
}

/**
 * The merchant's approved commissions that are in no open payout, of approved affiliates (or of those named), locked
 * until the transaction ends so that a concurrent void waits for the payout to exist and then removes them from it.
 */
export async function payableCommissions(
  sql: Queryable,
  merchantId: string,
  affiliateIds?: string[],
): Promise<PayableCommission[]> {
  return sql<PayableCommission[]>`
    select c.id, c.affiliate_id, c.currency, c.amount::text as amount, c.created_at
    from commissions c
    join affiliates a on a.merchant_id = c.merchant_id and a.id = c.affiliate_id
    where c.merchant_id = ${merchantId} and c.status = 'approved'
      -- A recorded void is settled with its payout (voided or clawed back), never paid by a new one.
      and c.void_requested_at is null
      ${affiliateIds ? sql`and c.affiliate_id in ${sql(affiliateIds)}` : sql`and a.status = 'approved'`}
      and not exists (
        select 1 from payout_commissions pc
        where pc.merchant_id = c.merchant_id and pc.commission_id = c.id and pc.released_at is null)
    order by c.id
    for update of c`;
}

/** The named affiliates that are the merchant's. */
export async function merchantAffiliateIds(sql: Queryable, merchantId: string, ids: string[]): Promise<Set<string>> {
  const rows = await sql<{ id: string }[]>`
    select id from affiliates where merchant_id = ${merchantId} and id in ${sql(ids)}`;
  return new Set(rows.map((r) => r.id));
}

/**
 * Per affiliate and currency ("aff_… USD"), the sum of the payouts created in [start, end) that did not fail and
 * were not canceled: what the year has paid or is paying.
 */
export async function payoutTotalsBetween(
  sql: Queryable,
  merchantId: string,
  affiliateIds: string[],
  start: Date,
  end: Date,
): Promise<Map<string, string>> {
  if (affiliateIds.length === 0) return new Map();
  const rows = await sql<{ affiliate_id: string; currency: string; total: string }[]>`
    select affiliate_id, currency, sum(amount)::text as total from payouts
    where merchant_id = ${merchantId} and affiliate_id = any(${affiliateIds}::text[])
      and status in ('pending', 'sending', 'sent', 'paid') and created_at >= ${start} and created_at < ${end}
    group by affiliate_id, currency`;
  return new Map(rows.map((r) => [`${r.affiliate_id} ${r.currency}`, r.total]));
}

/** A payout to insert: its group, id and hold. */
export type NewPayout = PayoutGroup & { id: string; heldReason: HeldReason | null };

const payoutColumns = unnestColumns({
  id: (p: NewPayout) => p.id,
  affiliateId: (p: NewPayout) => p.affiliateId,
  amount: (p: NewPayout) => p.amount,
  currency: (p: NewPayout) => p.currency,
  periodStart: (p: NewPayout) => p.periodStart.toISOString(),
  periodEnd: (p: NewPayout) => p.periodEnd.toISOString(),
  heldReason: (p: NewPayout) => p.heldReason,
});

const linkColumns = unnestColumns({
  payoutId: (l: { payoutId: string; commissionId: string }) => l.payoutId,
  commissionId: (l: { payoutId: string; commissionId: string }) => l.commissionId,
});

/**
 * Inserts the payouts and links their commissions; answers the stored rows in the order given. Arrays go through
 * unnest, not one parameter per value: a run may group tens of thousands of commissions.
 */
export async function insertPayouts(
  sql: Queryable,
  merchantId: string,
  payouts: NewPayout[],
  at: Date,
): Promise<PayoutRow[]> {
  if (payouts.length === 0) return [];
  const p = payoutColumns(payouts);
  await sql`
    insert into payouts (id, merchant_id, affiliate_id, amount, currency, status, period_start, period_end, created_at,
                         held_reason)
    select p.id, ${merchantId}, p.affiliate_id, p.amount::numeric, p.currency, 'pending', p.period_start::timestamptz,
           p.period_end::timestamptz, ${at}, p.held_reason
    from unnest(${p.id}::text[], ${p.affiliateId}::text[], ${p.amount}::text[], ${p.currency}::text[],
                ${p.periodStart}::text[], ${p.periodEnd}::text[], ${p.heldReason}::text[])
      as p(id, affiliate_id, amount, currency, period_start, period_end, held_reason)`;
  const l = linkColumns(
    payouts.flatMap((g) => g.commissionIds.map((commissionId) => ({ payoutId: g.id, commissionId }))),
  );
  await sql`
    insert into payout_commissions (merchant_id, payout_id, commission_id)
    select ${merchantId}, l.payout_id, l.commission_id
    from unnest(${l.payoutId}::text[], ${l.commissionId}::text[]) as l(payout_id, commission_id)`;
  const rows = await sql<PayoutRow[]>`
    select ${columns(sql)} from payouts p where p.merchant_id = ${merchantId} and p.id = any(${p.id}::text[])`;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return payouts.map((row) => byId.get(row.id)!);
}

export async function findPayout(
  sql: Queryable,
  merchantId: string,
  id: string,
  forUpdate = false,
): Promise<PayoutRow | undefined> {
  const [row] = await sql<PayoutRow[]>`
    select ${columns(sql)} from payouts p
    where p.merchant_id = ${merchantId} and p.id = ${id}
    ${forUpdate ? sql`for update of p` : sql``}`;
  return row;
}

// Written into the statement (as the commissions list does) so that Postgres costs the generic plan with it; only
// a whole number in range can reach the SQL text.
const pageSize = (limit: number): string => {
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new RangeError(`limit ${limit} is not a page size`);
  return String(limit);
};

export async function listPayouts(
  sql: Queryable,
  merchantId: string,
  filter: {
    status?: PayoutStatus;
    affiliateId?: string;
    after?: { created_at: string; id: string };
    limit: number;
  },
): Promise<PayoutRow[]> {
  return sql<PayoutRow[]>`
    select ${columns(sql)} from payouts p
    where p.merchant_id = ${merchantId}
      ${filter.status ? sql`and p.status = ${filter.status}` : sql``}
      ${filter.affiliateId ? sql`and p.affiliate_id = ${filter.affiliateId}` : sql``}
      ${filter.after ? sql`and (p.created_at, p.id) < (${filter.after.created_at}::timestamptz, ${filter.after.id})` : sql``}
    order by p.created_at desc, p.id desc
    limit ${sql.unsafe(pageSize(filter.limit))}`;
}

/**
 * Locks the commissions a payout holds (before the payout row itself: the order every writer of both follows, so
 * that a move and a void never wait on each other in a cycle).
 */
export async function lockPayoutCommissions(sql: Queryable, merchantId: string, payoutId: string): Promise<void> {
  await sql`
    select c.id from commissions c
    where c.merchant_id = ${merchantId} and c.id in (
      select pc.commission_id from payout_commissions pc
      where pc.merchant_id = ${merchantId} and pc.payout_id = ${payoutId} and pc.released_at is null)
    order by c.id
    for update of c`;
}

/** Sets the move's fields on the payout. */
export async function movePayout(
  sql: Queryable,
  merchantId: string,
  id: string,
  move:
    | { status: 'sent'; method: 'manual' | 'platform'; reference: string | null }
    | { status: 'paid' }
    | { status: 'failed'; failureReason: string }
    | { status: 'canceled' },
  at: Date,
): Promise<void> {
  const fields =
    move.status === 'sent'
      ? sql`status = 'sent', method = ${move.method}, reference = ${move.reference}, sent_at = ${at}, held_reason = null`
      : move.status === 'paid'
        ? sql`status = 'paid', paid_at = ${at}`
        : move.status === 'failed'
          ? sql`status = 'failed', failed_at = ${at}, failure_reason = ${move.failureReason}`
          : sql`status = 'canceled', canceled_at = ${at}, held_reason = null`;
  await sql`update payouts set ${fields} where merchant_id = ${merchantId} and id = ${id}`;
}

/** Releases the payout's commissions (failed or canceled): they are approved and in no open payout again. */
export async function releasePayoutCommissions(sql: Queryable, merchantId: string, id: string, at: Date) {
  await sql`
    update payout_commissions set released_at = ${at}
    where merchant_id = ${merchantId} and payout_id = ${id} and released_at is null`;
}

/** Marks the payout's commissions paid. */
export async function payPayoutCommissions(sql: Queryable, merchantId: string, id: string, at: Date) {
  await sql`
    update commissions set status = 'paid', paid_at = ${at}
    where merchant_id = ${merchantId} and status = 'approved' and id in (
      select commission_id from payout_commissions
      where merchant_id = ${merchantId} and payout_id = ${id} and released_at is null)`;
}

/**
 * Adds a paid payout to the affiliate's totals: its currency's row of affiliate_stats always, and
 * lifetime_commissions_paid when it is in the merchant's currency (amounts are never converted).
 */
export async function addPaidToAffiliate(
  sql: Queryable,
  payout: Pick<PayoutRow, 'merchant_id' | 'affiliate_id' | 'currency' | 'amount'>,
  merchantCurrency: string,
  at: Date,
): Promise<void> {
  await sql`
    insert into affiliate_stats (merchant_id, affiliate_id, currency, commissions_paid, updated_at)
    values (${payout.merchant_id}, ${payout.affiliate_id}, ${payout.currency}, ${payout.amount}::numeric, ${at})
    on conflict (merchant_id, affiliate_id, currency) do update
      set commissions_paid = affiliate_stats.commissions_paid + excluded.commissions_paid, updated_at = excluded.updated_at`;
  if (payout.currency === merchantCurrency)
    await sql`
      update affiliates set lifetime_commissions_paid = lifetime_commissions_paid + ${payout.amount}::numeric,
        updated_at = ${at}
      where merchant_id = ${payout.merchant_id} and id = ${payout.affiliate_id}`;
}

/**
 * The open payout (pending, sending or sent) a commission is in, if any, locked until the transaction ends (after
 * the commission: the lock order of payout moves), with whether it is frozen (docs/PAYOUTS.md).
 */
export async function openPayoutOf(
  sql: Queryable,
  merchantId: string,
  commissionId: string,
): Promise<{ id: string; status: PayoutStatus; frozen: boolean } | undefined> {
  const [row] = await sql<{ id: string; status: PayoutStatus; frozen: boolean }[]>`
    select p.id, p.status, ${frozenPayout(sql)} as frozen from payout_commissions pc
    join payouts p on p.merchant_id = pc.merchant_id and p.id = pc.payout_id
    where pc.merchant_id = ${merchantId} and pc.commission_id = ${commissionId} and pc.released_at is null
      and p.status in ('pending', 'sending', 'sent')
    for update of p`;
  return row;
}

/**
 * Takes voided commissions out of the pending payouts that held them, not exported (an exported payout is frozen),
 * and recomputes those payouts' amounts (their commissions less their deductions) and periods; a payout left with no
 * commission, or whose deductions take all it has left, is canceled. The links stay, released, as the payout's
 * history. Answers how many payouts changed.
 */
export async function removeVoidedFromPendingPayouts(
  sql: Queryable,
  merchantId: string,
  commissionIds: string[],
  at: Date,
): Promise<number> {
  if (commissionIds.length === 0) return 0;
  const removed = await sql<{ payout_id: string }[]>`
    update payout_commissions pc set released_at = ${at} from payouts p
    where pc.merchant_id = ${merchantId} and pc.commission_id in ${sql(commissionIds)} and pc.released_at is null
      and p.merchant_id = pc.merchant_id and p.id = pc.payout_id and p.status = 'pending' and p.exported_at is null
    returning pc.payout_id`;
  const payoutIds = [...new Set(removed.map((r) => r.payout_id))];
  if (payoutIds.length === 0) return 0;
  await capAdjustments(sql, merchantId, payoutIds);
  await sql`
    update payouts p set
      amount = greatest(coalesce(t.total, 0) - t.deducted, 0), period_start = coalesce(t.first, p.period_start),
      period_end = coalesce(t.last, p.period_end),
      status = case when t.total is null then 'canceled' else p.status end,
      canceled_at = case when t.total is null then ${at}::timestamptz else p.canceled_at end,
      held_reason = case when t.total is null then null else p.held_reason end
    from (
      select ids.id, sum(c.amount) as total, min(c.created_at) as first, max(c.created_at) as last,
        coalesce((select sum(a.amount) from payout_adjustments a
                  where a.merchant_id = ${merchantId} and a.payout_id = ids.id), 0) as deducted
      from unnest(${payoutIds}::text[]) as ids(id)
      left join payout_commissions pc on pc.merchant_id = ${merchantId} and pc.payout_id = ids.id and pc.released_at is null
      left join commissions c on c.merchant_id = pc.merchant_id and c.id = pc.commission_id
      group by ids.id
    ) t
    where p.merchant_id = ${merchantId} and p.id = t.id`;
  // Its deductions took all that is left: nothing to send, so it is canceled and its commissions released, as a run
  // makes no payout that would pay nothing; the clawbacks it deducted are owed again (domain/clawbacks.ts). Voids
  // recorded while it was frozen (it was sending, then refused) are voided first, as any cancel does: released
  // approved, they would be paid by the next run.
  const emptied = await sql<{ id: string }[]>`
    update payouts set status = 'canceled', canceled_at = ${at}, held_reason = null
    where merchant_id = ${merchantId} and id = any(${payoutIds}::text[]) and status = 'pending' and amount = 0
      and exists (select 1 from payout_adjustments a where a.merchant_id = payouts.merchant_id and a.payout_id = payouts.id)
    returning id`;
  for (const { id } of emptied) {
    const voided = await voidRequestedInPayout(sql, merchantId, id, at);
    await enqueueEvents(
      sql,
      voided.map((row) => ({ merchantId, type: 'commission.voided' as const, data: commissionEventData(row) })),
    );
    await releasePayoutCommissions(sql, merchantId, id, at);
  }
  return payoutIds.length;
}

/**
 * Releases every held payout (of the merchant, or of all merchants) whose affiliate now has a tax form in force (not
 * superseded, not expired): the catch-all behind the release made when a form is stored. Answers how many.
 */
export async function releaseHoldsWithValidForms(sql: Queryable, merchantId?: string): Promise<number> {
  const rows = await sql`
    update payouts p set held_reason = null
    where p.held_reason = 'tax_form_required' and p.status = 'pending'
      ${merchantId ? sql`and p.merchant_id = ${merchantId}` : sql``}
      and exists (
        select 1 from tax_forms f
        where f.merchant_id = p.merchant_id and f.affiliate_id = p.affiliate_id
          and f.superseded_at is null and (f.expires_at is null or f.expires_at > now()))
    returning p.id`;
  return rows.length;
}

/** The most rows one export holds: a PayPal Payouts batch file takes up to 5,000. */
const EXPORT_MAX_ROWS = 5000;

export type ExportablePayout = Omit<
  PayoutRow,
  'commission_ids' | 'adjustments' | 'adjustment_count' | 'adjustments_amount'
> & { display_name: string };

/**
 * Pending payouts (held ones excepted: they cannot be sent), oldest first, with the affiliate's name, locked until
 * the transaction ends: the export freezes those it writes, and a void or move waits for it. Only pending ones: a
 * sending or sent payout may be paid through the platform, and a file of it would let the bank pay it again.
 */
export async function exportablePayouts(
  sql: Queryable,
  merchantId: string,
  filter: { currency?: string },
): Promise<ExportablePayout[]> {
  return sql<ExportablePayout[]>`
    select p.id, p.merchant_id, p.affiliate_id, p.amount::text as amount, p.currency, p.status, p.method, p.reference,
      p.period_start, p.period_end, p.created_at, p.sent_at, p.paid_at, p.failed_at, p.failure_reason, p.held_reason,
      p.exported_at, a.display_name
    from payouts p join affiliates a on a.merchant_id = p.merchant_id and a.id = p.affiliate_id
    where p.merchant_id = ${merchantId} and p.status = 'pending' and p.held_reason is null
      ${filter.currency ? sql`and p.currency = ${filter.currency}` : sql``}
    order by p.created_at, p.id
    limit ${EXPORT_MAX_ROWS}
    for update of p`;
}
