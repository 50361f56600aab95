import type { Queryable } from '@platform/shared/db';
import type { HeldReason, PayoutStatus } from '@platform/shared/schemas/payouts';

/** What a send through the platform reads of its payout, under the payout's row lock. */
interface SendState {
  id: string;
  merchant_id: string;
  affiliate_id: string;
  amount: string;
  currency: string;
  status: PayoutStatus;
  method: 'manual' | 'platform' | null;
  held_reason: HeldReason | null;
  send_attempted_at: Date | null;
  send_deadline: Date | null;
  send_destination_last4: string | null;
  exported_at: Date | null;
}

/** The payout's send state, locked until the transaction ends (the caller has locked its commissions first). */
export async function lockSendState(sql: Queryable, merchantId: string, id: string): Promise<SendState | undefined> {
  const [row] = await sql<SendState[]>`
    select id, merchant_id, affiliate_id, amount::text as amount, currency, status, method, held_reason,
      send_attempted_at, send_deadline, send_destination_last4, exported_at
    from payouts where merchant_id = ${merchantId} and id = ${id}
    for update`;
  return row;
}

/**
 * Claims the payout for one request to the payment service: `sending`, method platform, when it was asked and until
 * when that request can move money. The destination stays the one the first claim named.
 */
export async function markSending(
  sql: Queryable,
  merchantId: string,
  id: string,
  attempt: { at: Date; deadline: Date; destinationLast4: string },
): Promise<void> {
  await sql`
    update payouts set status = 'sending', method = 'platform', held_reason = null,
      send_attempted_at = ${attempt.at}, send_deadline = ${attempt.deadline},
      send_destination_last4 = coalesce(send_destination_last4, ${attempt.destinationLast4})
    where merchant_id = ${merchantId} and id = ${id}`;
}

/**
 * Back to pending after the payment service refused the request whose deadline is given, unless another request has
 * claimed the payout since (its answer decides). Answers whether it moved.
 */
export async function revertSending(sql: Queryable, merchantId: string, id: string, deadline: Date): Promise<boolean> {
  const rows = await sql`
    update payouts set status = 'pending', method = null, send_attempted_at = null, send_deadline = null,
      send_destination_last4 = null
    where merchant_id = ${merchantId} and id = ${id} and status = 'sending' and send_deadline = ${deadline}
    returning id`;
  return rows.length === 1;
}

/** Payouts of every merchant left sending since before `before`, the oldest first. */
export async function staleSends(
  sql: Queryable,
  before: Date,
  limit: number,
): Promise<{ merchant_id: string; id: string }[]> {
  return sql<{ merchant_id: string; id: string }[]>`
    select merchant_id, id from payouts
    where status = 'sending' and send_attempted_at < ${before}
    order by send_attempted_at limit ${limit}`;
}
