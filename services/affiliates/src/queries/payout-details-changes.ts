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

/** The affiliate's changes, newest first, from after the keyset position when given. */
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
      ${page.after ? sql`and (changed_at, id) < (${page.after.created_at}::timestamptz, ${page.after.id})` : sql``}
    order by changed_at desc, id desc
    limit ${page.limit}`;
}
