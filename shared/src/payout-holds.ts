import type { Queryable } from './db.ts';

/**
 * Releases the affiliate's payouts held for a tax form (held_reason `tax_form_required`): they may be sent now. Called
 * in the transaction that stores a valid tax form, so the release commits with it. The commissions service also
 * releases such holds when a payout is marked sent and on every pass of its payout schedule, so a form stored by any
 * other path releases them too. Answers the ids released.
 */
export async function releaseTaxFormHolds(sql: Queryable, merchantId: string, affiliateId: string): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    update payouts set held_reason = null
    where merchant_id = ${merchantId} and affiliate_id = ${affiliateId}
      and held_reason = 'tax_form_required' and status = 'pending'
    returning id`;
  return rows.map((r) => r.id);
}
