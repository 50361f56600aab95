import type { Queryable, Sql } from '@platform/shared/db';
import type { RowPosition } from '@platform/shared/cursor';
import { createdRange, keyset, type ListParams } from './keyset.ts';

export interface BalanceTransactionRow {
  id: string;
  livemode: boolean;
  holder: string;
  movement_id: string;
  type: 'charge' | 'payment' | 'payout' | 'payout_failure' | 'transfer';
  amount: string;
  fee: string;
  net: string;
  currency: string;
  status: 'pending' | 'available';
  available_on: Date;
  source: string;
  description: string | null;
  created_at: Date;
}

export async function transactionCreatedAt(sql: Sql, livemode: boolean, holder: string, id: string) {
  const [row] = await sql<{ created_at: Date }[]>`
    select created_at from balance_transactions where id = ${id} and livemode = ${livemode} and holder = ${holder}`;
  return row?.created_at ?? null;
}

export function listTransactions(
  sql: Sql,
  livemode: boolean,
  holder: string,
  params: ListParams & { type?: string; currency?: string; source?: string },
  position: RowPosition,
  limit: number,
) {
  const page = keyset(sql, position);
  return sql<BalanceTransactionRow[]>`
    select * from balance_transactions
    where livemode = ${livemode} and holder = ${holder}
      ${params.type ? sql`and type = ${params.type}` : sql``}
      ${params.currency ? sql`and currency = ${params.currency}` : sql``}
      ${params.source ? sql`and source = ${params.source}` : sql``}
      ${createdRange(sql, params.created)} ${page.where}
    ${page.order} limit ${limit}`;
}

/** Pending transactions whose funds came due, locked for this pass (other replicas skip them). */
export function claimDueTransactions(sql: Queryable, limit: number) {
  return sql<BalanceTransactionRow[]>`
    select * from balance_transactions
    where status = 'pending' and available_on <= now()
    order by available_on limit ${limit}
    for update skip locked`;
}

export async function markAvailable(sql: Queryable, id: string): Promise<void> {
  await sql`update balance_transactions set status = 'available' where id = ${id}`;
}
