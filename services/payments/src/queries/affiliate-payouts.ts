import type { Queryable, Sql } from '@platform/shared/db';
import type { PayoutRow } from './payouts.ts';

/**
 * The merchant's connected account that funds its platform payouts: its newest live one. Affiliate payouts are live
 * money, so a test account (test-mode funds) never pays one, whoever bound it.
 */
export async function fundingAccount(sql: Queryable, merchantId: string) {
  const [row] = await sql<{ id: string; livemode: true }[]>`
    select id, livemode from payment_accounts where merchant_id = ${merchantId} and livemode
    order by created_at desc, id desc limit 1`;
  return row;
}

export async function findByAffiliatePayout(sql: Queryable, payoutId: string) {
  const [row] = await sql<PayoutRow[]>`select * from payment_payouts where affiliate_payout_id = ${payoutId}`;
  return row;
}

/** Settled ledger payouts of affiliate payouts whose outcome the commissions service has not acknowledged. */
export function unreportedPayouts(sql: Sql, limit: number) {
  return sql<(PayoutRow & { affiliate_payout_id: string; merchant_id: string })[]>`
    select * from payment_payouts
    where affiliate_payout_id is not null and status in ('paid', 'failed') and reported_status is distinct from status
    order by status_changed_at limit ${limit}`;
}

export async function markReported(sql: Sql, id: string, status: string): Promise<void> {
  await sql`update payment_payouts set reported_status = ${status} where id = ${id}`;
}
