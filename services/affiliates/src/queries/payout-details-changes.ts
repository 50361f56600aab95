import type { Queryable } from '@platform/shared/db';
import type { PayoutDetailsSource } from '@platform/shared/schemas/tax-forms';

/** The audit of payout-detail changes (payout_details_changes): masked values only, never the vault's ciphertext. */

export async function insertPayoutDetailsChange(
  sql: Queryable,
  c: {
    id: string;
    merchantId: string;
    affiliateId: string;
    source: PayoutDetailsSource;
    actorId: string | null;
    before: Record<string, string> | null;
    after: Record<string, string>;
  },
): Promise<void> {
  await sql`
    insert into payout_details_changes (id, merchant_id, affiliate_id, source, actor_id, masked_before, masked_after)
    values (${c.id}, ${c.merchantId}, ${c.affiliateId}, ${c.source}, ${c.actorId},
            ${c.before ? sql.json(c.before) : null}, ${sql.json(c.after)})`;
}

export interface PayoutDetailsChangeRow {
  id: string;
  affiliate_id: string;
  created_at: Date;
  source: PayoutDetailsSource;
  actor_id: string | null;
  masked_before: Record<string, string> | null;
  masked_after: Record<string, string>;
}

/**
 * The affiliate's changes, newest first, from after the keyset position when given. Newest is the last to take
 * effect: `seq` is drawn under the affiliate's row lock, so it follows the order of the changes even when two share
 * a millisecond of `changed_at` (migration 067). Rows from before it have no seq, are older than any that has one,
 * and keep their (changed_at, id) order. The cursor names its row by id, whose place is read back here.
 */
export async function listPayoutDetailsChanges(
  sql: Queryable,
  merchantId: string,
  affiliateId: string,
  page: { after: { created_at: string; id: string } | undefined; limit: number },
): Promise<PayoutDetailsChangeRow[]> {
  return sql<PayoutDetailsChangeRow[]>`
    select id, affiliate_id, changed_at as created_at, source, actor_id, masked_before, masked_after
    from payout_details_changes
    where merchant_id = ${merchantId} and affiliate_id = ${affiliateId}
      ${
        page.after
          ? sql`and (coalesce(seq, 0), changed_at, id) < (
              select coalesce(p.seq, 0), p.changed_at, p.id from payout_details_changes p
              where p.merchant_id = ${merchantId} and p.affiliate_id = ${affiliateId} and p.id = ${page.after.id})`
          : sql``
      }
    order by coalesce(seq, 0) desc, changed_at desc, id desc
    limit ${page.limit}`;
}
