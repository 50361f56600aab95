import type { Queryable } from '@platform/shared/db';
import { commissionColumns, type CommissionRow } from './commissions.ts';

/** Whether the payout is the merchant's: its commissions are listed only then. */
export async function payoutExists(sql: Queryable, merchantId: string, payoutId: string): Promise<boolean> {
  const [row] = await sql`select 1 from payouts where merchant_id = ${merchantId} and id = ${payoutId}`;
  return row !== undefined;
}

/**
 * A page of the commissions linked to a payout (released or not, as its commission_count counts them), newest first
 * by id (ids sort by creation time), after the keyset position's id when given. Keyed on the id alone so that a page
 * is a range of the links' primary key (payout_id, commission_id): a payout may hold tens of thousands, and no page
 * sorts them all.
 */
export async function listPayoutCommissions(
  sql: Queryable,
  merchantId: string,
  payoutId: string,
  page: { after?: { id: string }; limit: number },
): Promise<CommissionRow[]> {
  // Written into the statement, as the other lists do; only a whole number in range can reach the SQL text.
  if (!Number.isInteger(page.limit) || page.limit < 1 || page.limit > 1000)
    throw new RangeError(`limit ${page.limit} is not a page size`);
  return sql<CommissionRow[]>`
    select ${commissionColumns(sql, 'c')}
    from payout_commissions pc
    join commissions c on c.merchant_id = pc.merchant_id and c.id = pc.commission_id
    where pc.payout_id = ${payoutId} and pc.merchant_id = ${merchantId}
      ${page.after ? sql`and pc.commission_id < ${page.after.id}` : sql``}
    order by pc.commission_id desc
    limit ${sql.unsafe(String(page.limit))}`;
}
