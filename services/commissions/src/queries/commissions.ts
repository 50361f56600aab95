import type { Queryable } from '@platform/shared/db';
import type { CommissionStatus } from '@platform/shared/schemas/commissions';
import { unnestColumns } from '@platform/shared/unnest';

export interface CommissionRow {
  id: string;
  merchant_id: string;
  affiliate_id: string;
  event_id: string;
  order_id: string;
  level: number;
  rate: string | null;
  amount: string;
  currency: string;
  status: CommissionStatus;
  held: boolean;
  created_at: Date;
  approved_at: Date | null;
  voided_at: Date | null;
  void_reason: string | null;
  /** A refund or void recorded while its payout was frozen (docs/PAYOUTS.md); null otherwise. */
  void_requested_at: Date | null;
}

const FIELDS = [
  'id',
  'merchant_id',
  'affiliate_id',
  'event_id',
  'order_id',
  'level',
  'rate',
  'amount',
  'currency',
  'status',
  'held',
  'created_at',
  'approved_at',
  'voided_at',
  'void_reason',
  'void_requested_at',
];
const PLAIN = FIELDS.join(', ');

/** The columns of a CommissionRow, of the table aliased `alias` when given (only constant text reaches the SQL). */
export const commissionColumns = (sql: Queryable, alias?: 'c') =>
  sql.unsafe(alias ? FIELDS.map((f) => `${alias}.${f}`).join(', ') : PLAIN);
const columns = (sql: Queryable) => commissionColumns(sql);

/** A commission to insert with insertCommissionsOfEvents. */
export interface CommissionLine {
  id: string;
  merchantId: string;
  affiliateId: string;
  eventId: string;
  orderId: string;
  level: number;
  rate: string | null;
  amount: string;
  currency: string;
  held: boolean;
}

const lineColumns = unnestColumns({
  id: (l: CommissionLine) => l.id,
  merchantId: (l: CommissionLine) => l.merchantId,
  affiliateId: (l: CommissionLine) => l.affiliateId,
  eventId: (l: CommissionLine) => l.eventId,
  orderId: (l: CommissionLine) => l.orderId,
  level: (l: CommissionLine) => l.level,
  rate: (l: CommissionLine) => l.rate,
  amount: (l: CommissionLine) => l.amount,
  currency: (l: CommissionLine) => l.currency,
  // As text: the driver does not send a JS array of booleans as a Postgres array.
  held: (l: CommissionLine) => String(l.held),
});

/**
 * Inserts the commissions of several events (one per level that has an earner) in one statement, skipping a level
 * an event already has a commission at (the exactly-once guard UNIQUE (merchant_id, event_id, level)); each line
 * names its event. Answers the rows inserted (in no particular order: match them by event_id and level).
 */
export async function insertCommissionsOfEvents(
  sql: Queryable,
  createdAt: Date,
  lines: CommissionLine[],
): Promise<CommissionRow[]> {
  if (lines.length === 0) return [];
  const c = lineColumns(lines);
  return sql<CommissionRow[]>`
    insert into commissions (id, merchant_id, affiliate_id, event_id, order_id, level, rate, amount, currency, status, held, created_at)
    select l.id, l.merchant_id, l.affiliate_id, l.event_id, l.order_id, l.level, l.rate::numeric, l.amount::numeric,
           l.currency, 'pending', l.held::boolean, ${createdAt}
    from unnest(${c.id}::text[], ${c.merchantId}::text[], ${c.affiliateId}::text[], ${c.eventId}::text[], ${c.orderId}::text[],
                ${c.level}::int[], ${c.rate}::text[], ${c.amount}::text[], ${c.currency}::text[], ${c.held}::text[])
      with ordinality as l(id, merchant_id, affiliate_id, event_id, order_id, level, rate, amount, currency, held, n)
    order by l.n
    on conflict (merchant_id, event_id, level) do nothing
    returning ${columns(sql)}`;
}

export async function findCommission(
  sql: Queryable,
  merchantId: string,
  id: string,
  forUpdate = false,
): Promise<CommissionRow | undefined> {
  const [row] = await sql<CommissionRow[]>`
    select ${columns(sql)} from commissions
    where merchant_id = ${merchantId} and id = ${id}
    ${forUpdate ? sql`for update` : sql``}`;
  return row;
}

export async function listCommissions(
  sql: Queryable,
  merchantId: string,
  filter: {
    status?: CommissionStatus;
    affiliateId?: string;
    after?: { created_at: string; id: string };
    limit: number;
  },
): Promise<CommissionRow[]> {
  // The limit is written into the statement rather than sent as a parameter, so that Postgres can cost the prepared
  // statement's generic plan (as the affiliates list does). Only a whole number in range can reach the SQL text.
  if (!Number.isInteger(filter.limit) || filter.limit < 1 || filter.limit > 1000)
    throw new RangeError(`limit ${filter.limit} is not a page size`);
  return sql<CommissionRow[]>`
    select ${columns(sql)} from commissions
    where merchant_id = ${merchantId}
      ${filter.status ? sql`and status = ${filter.status}` : sql``}
      ${filter.affiliateId ? sql`and affiliate_id = ${filter.affiliateId}` : sql``}
      ${filter.after ? sql`and (created_at, id) < (${filter.after.created_at}::timestamptz, ${filter.after.id})` : sql``}
    order by created_at desc, id desc
    limit ${sql.unsafe(String(filter.limit))}`;
}

export async function approveCommission(
  sql: Queryable,
  merchantId: string,
  id: string,
  at: Date,
): Promise<CommissionRow> {
  const [row] = await sql<CommissionRow[]>`
    update commissions set status = 'approved', approved_at = ${at}
    where merchant_id = ${merchantId} and id = ${id} and status = 'pending'
    returning ${columns(sql)}`;
  return row!;
}

/**
 * A commission in a frozen payout (sending, sent, or exported while pending) stays as it is until the payout is paid
 * or fails: the money is on its way, or the bank may hold the file. The void statements below leave such commissions
 * out; their voids are recorded instead (queries/clawbacks.ts).
 */
const notInFrozenPayout = (sql: Queryable) => sql`
  not exists (
    select 1 from payout_commissions pc join payouts p on p.merchant_id = pc.merchant_id and p.id = pc.payout_id
    where pc.merchant_id = commissions.merchant_id and pc.commission_id = commissions.id and pc.released_at is null
      and (p.status in ('sending', 'sent') or (p.status = 'pending' and p.exported_at is not null)))`;

/**
 * Voids the given commissions of the merchant that are still pending or approved (and in no frozen payout); returns
 * those it voided.
 */
export async function voidCommissions(
  sql: Queryable,
  merchantId: string,
  ids: string[],
  reason: string,
  at: Date,
): Promise<CommissionRow[]> {
  if (ids.length === 0) return [];
  return sql<CommissionRow[]>`
    update commissions set status = 'voided', voided_at = ${at}, void_reason = ${reason}
    where merchant_id = ${merchantId} and id in ${sql(ids)} and status in ('pending', 'approved') and ${notInFrozenPayout(sql)}
    returning ${columns(sql)}`;
}

/**
 * Voids every pending or approved commission of the merchant's order (a refund); paid ones stay paid, and those in a
 * frozen payout stay in it.
 */
export async function voidOrderCommissions(
  sql: Queryable,
  merchantId: string,
  orderId: string,
  reason: string,
  at: Date,
): Promise<CommissionRow[]> {
  return sql<CommissionRow[]>`
    update commissions set status = 'voided', voided_at = ${at}, void_reason = ${reason}
    where merchant_id = ${merchantId} and order_id = ${orderId} and status in ('pending', 'approved')
      and ${notInFrozenPayout(sql)}
    returning ${columns(sql)}`;
}

/** Merchants that have pending commissions, not held, created at or before `before`. */
export async function merchantsWithDueCandidates(sql: Queryable, before: Date): Promise<string[]> {
  const rows = await sql<{ merchant_id: string }[]>`
    select distinct merchant_id from commissions
    where status = 'pending' and not held and created_at <= ${before}`;
  return rows.map((r) => r.merchant_id);
}

/**
 * Approves up to `limit` of the merchant's pending, not held commissions created at or before `cutoff`. Rows that
 * another replica is approving right now are skipped (SKIP LOCKED), so replicas never approve one twice.
 */
export async function approveDueCommissions(
  sql: Queryable,
  merchantId: string,
  cutoff: Date,
  at: Date,
  limit: number,
): Promise<CommissionRow[]> {
  return sql<CommissionRow[]>`
    with due as (
      select id from commissions
      where merchant_id = ${merchantId} and status = 'pending' and not held and created_at <= ${cutoff}
      order by created_at, id
      limit ${limit}
      for update skip locked
    )
    update commissions c set status = 'approved', approved_at = ${at}
    from due where c.merchant_id = ${merchantId} and c.id = due.id
    returning ${commissionColumns(sql, 'c')}`;
}
