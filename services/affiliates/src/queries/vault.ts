import type { Queryable } from '@platform/shared/db';

/**
 * The vault rows' life after use. A secret is superseded when the affiliate's reference moves to a newer one (new
 * payout details, a new tax form's TIN); it stays for a retention, for disputes over what was paid where, and is
 * then deleted unless a row still references it (a superseded tax form keeps its TIN as long as the form).
 */

/** Marks the affiliate's vault rows that the affiliate no longer references as superseded, now. */
export async function supersedeUnreferencedSecrets(
  sql: Queryable,
  merchantId: string,
  affiliateId: string,
): Promise<void> {
  await sql`
    update vault_secrets v set superseded_at = date_trunc('milliseconds', now())
    from affiliates a
    where v.merchant_id = ${merchantId} and v.affiliate_id = ${affiliateId} and v.superseded_at is null
      and a.merchant_id = v.merchant_id and a.id = v.affiliate_id
      and v.id is distinct from a.payout_details_vault_id and v.id is distinct from a.tin_vault_id`;
}

/**
 * Deletes up to `limit` vault rows superseded more than `retentionDays` ago that nothing references, of every
 * merchant (the retention is the platform's); answers how many. Rows locked by another replica's purge are skipped.
 */
export async function deleteSupersededSecrets(sql: Queryable, retentionDays: number, limit: number): Promise<number> {
  const deleted = await sql`
    delete from vault_secrets where id in (
      select v.id from vault_secrets v
      where v.superseded_at < now() - make_interval(days => ${retentionDays})
        and not exists (
          select 1 from affiliates a
          where a.merchant_id = v.merchant_id and a.id = v.affiliate_id
            and (a.payout_details_vault_id = v.id or a.tin_vault_id = v.id))
        and not exists (
          select 1 from tax_forms f
          where f.merchant_id = v.merchant_id and f.affiliate_id = v.affiliate_id and f.tin_vault_id = v.id)
      limit ${limit}
      for update of v skip locked)`;
  return deleted.count;
}
