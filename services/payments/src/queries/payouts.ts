import type { Queryable, Sql } from '@platform/shared/db';
import type { RowPosition } from '@platform/shared/cursor';
import { createdRange, keyset, type ListParams } from './keyset.ts';

export type PayoutStatus = 'pending' | 'in_transit' | 'paid' | 'failed' | 'canceled';

export interface PayoutRow {
  id: string;
  livemode: boolean;
  holder: string;
  amount: string;
  currency: string;
  status: PayoutStatus;
  description: string | null;
  metadata: Record<string, string>;
  destination_last4: string | null;
  failure_code: string | null;
  failure_message: string | null;
  balance_transaction: string;
  failure_balance_transaction: string | null;
  arrival_date: Date;
  created_at: Date;
  /** For an affiliate payout (method platform): the connected account whose balance funded it. */
  funded_by: string | null;
}

export async function insertPayout(
  sql: Queryable,
  p: Pick<
    PayoutRow,
    | 'id'
    | 'livemode'
    | 'holder'
    | 'currency'
    | 'description'
    | 'metadata'
    | 'destination_last4'
    | 'balance_transaction'
    | 'arrival_date'
  > & {
    amount: number;
    /** An affiliate payout (method platform): which, for which merchant, funded by which connected account. */
    affiliate?: { payout_id: string; merchant_id: string; funded_by: string };
  },
): Promise<PayoutRow> {
  const [row] = await sql<PayoutRow[]>`
    insert into payment_payouts (id, livemode, holder, amount, currency, status, description, metadata,
      destination_last4, balance_transaction, arrival_date, affiliate_payout_id, merchant_id, funded_by)
    values (${p.id}, ${p.livemode}, ${p.holder}, ${p.amount}, ${p.currency}, 'pending', ${p.description},
      ${sql.json(p.metadata)}, ${p.destination_last4}, ${p.balance_transaction}, ${p.arrival_date},
      ${p.affiliate?.payout_id ?? null}, ${p.affiliate?.merchant_id ?? null}, ${p.affiliate?.funded_by ?? null})
    returning *`;
  return row!;
}

export async function findPayout(sql: Queryable, livemode: boolean, holder: string, id: string) {
  const [row] = await sql<PayoutRow[]>`
    select * from payment_payouts where id = ${id} and livemode = ${livemode} and holder = ${holder}`;
  return row;
}

export function listPayouts(
  sql: Sql,
  livemode: boolean,
  holder: string,
  params: ListParams & { status?: string },
  position: RowPosition,
  limit: number,
) {
  const page = keyset(sql, position);
  return sql<PayoutRow[]>`
    select * from payment_payouts
    where livemode = ${livemode} and holder = ${holder}
      ${params.status ? sql`and status = ${params.status}` : sql``}
      ${createdRange(sql, params.created)} ${page.where}
    ${page.order} limit ${limit}`;
}

/** Open payouts whose current step has lasted `stepMs`, locked for this pass (other replicas skip them). */
export function claimDuePayouts(sql: Queryable, stepMs: number, limit: number) {
  return sql<PayoutRow[]>`
    select * from payment_payouts
    where status in ('pending', 'in_transit') and status_changed_at <= now() - ${stepMs} * interval '1 millisecond'
    order by status_changed_at limit ${limit}
    for update skip locked`;
}

export async function movePayout(
  sql: Queryable,
  id: string,
  status: PayoutStatus,
  failure?: { code: string; message: string; balance_transaction: string },
): Promise<PayoutRow> {
  const [row] = await sql<PayoutRow[]>`
    update payment_payouts set status = ${status}, status_changed_at = now(),
      failure_code = ${failure?.code ?? null}, failure_message = ${failure?.message ?? null},
      failure_balance_transaction = ${failure?.balance_transaction ?? null}
    where id = ${id} returning *`;
  return row!;
}
