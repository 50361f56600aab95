import type { Queryable } from '@platform/shared/db';

export async function affiliateExists(sql: Queryable, merchantId: string, id: string): Promise<boolean> {
  const [row] = await sql`select 1 from affiliates where merchant_id = ${merchantId} and id = ${id}`;
  return row !== undefined;
}

/** Referral links and the tracking script record visits for approved affiliates only. */
export async function findApprovedAffiliateIdBySlug(
  sql: Queryable,
  merchantId: string,
  slug: string,
): Promise<string | undefined> {
  const [row] = await sql<{ id: string }[]>`
    select id from affiliates where merchant_id = ${merchantId} and slug = ${slug} and status = 'approved'`;
  return row?.id;
}
