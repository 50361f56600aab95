import type { Queryable } from '@platform/shared/db';

/**
 * What an application reads of the programme page (migration 063; the gateway's dashboard writes it) and writes of
 * the application itself.
 */
export interface ProgrammeRow {
  merchant_id: string;
  auto_approve: boolean;
}

export async function findProgrammeBySlug(sql: Queryable, slug: string): Promise<ProgrammeRow | undefined> {
  const [row] = await sql<ProgrammeRow[]>`select merchant_id, auto_approve from programmes where slug = ${slug}`;
  return row;
}

export async function merchantName(sql: Queryable, merchantId: string): Promise<string> {
  const [row] = await sql<{ name: string }[]>`select name from merchants where id = ${merchantId}`;
  return row!.name;
}

/** The approved affiliate of this merchant with this slug: the parent a recruit link names. */
export async function findApprovedAffiliateIdBySlug(
  sql: Queryable,
  merchantId: string,
  slug: string,
): Promise<string | undefined> {
  const [row] = await sql<{ id: string }[]>`
    select id from affiliates where merchant_id = ${merchantId} and slug = ${slug} and status = 'approved'`;
  return row?.id;
}

export async function insertApplication(
  sql: Queryable,
  a: { merchantId: string; affiliateId: string; website: string; promotion: string },
): Promise<void> {
  await sql`
    insert into affiliate_applications (merchant_id, affiliate_id, website, promotion, terms_accepted_at)
    values (${a.merchantId}, ${a.affiliateId}, ${a.website}, ${a.promotion}, now())`;
}

/** The origins the merchant allows to frame the portal (none before the programme page is set up). */
export async function frameOrigins(sql: Queryable, merchantId: string): Promise<string[]> {
  const [row] = await sql<{ frame_origins: string[] }[]>`
    select frame_origins from programmes where merchant_id = ${merchantId}`;
  return row?.frame_origins ?? [];
}
