import type { Queryable } from '@platform/shared/db';
import { affiliateViewColumns, type AffiliateViewRow } from '@platform/shared/affiliate-view';
import type { AffiliateStatus } from '@platform/shared/schemas/affiliates';

/** The columns an affiliate query may select: the public view's, never the vault references. */
export type AffiliateRow = AffiliateViewRow;

const columns = affiliateViewColumns;

export async function findAffiliate(
  sql: Queryable,
  merchantId: string,
  id: string,
  forUpdate = false,
): Promise<AffiliateRow | undefined> {
  const [row] = await sql<AffiliateRow[]>`
    select ${columns(sql)} from affiliates a join merchants m on m.id = a.merchant_id
    where a.merchant_id = ${merchantId} and a.id = ${id}
    ${forUpdate ? sql`for update of a` : sql``}`;
  return row;
}

export async function findAffiliateIdByEmail(
  sql: Queryable,
  merchantId: string,
  email: string,
): Promise<string | undefined> {
  const [row] = await sql<{ id: string }[]>`
    select id from affiliates where merchant_id = ${merchantId} and lower(email) = lower(${email})`;
  return row?.id;
}

export async function slugTaken(sql: Queryable, merchantId: string, slug: string): Promise<boolean> {
  const [row] = await sql`select 1 from affiliates where merchant_id = ${merchantId} and slug = ${slug}`;
  return row !== undefined;
}

export async function listAffiliates(
  sql: Queryable,
  merchantId: string,
  filter: {
    status?: AffiliateStatus;
    email?: string;
    parentId?: string;
    after?: { created_at: string; id: string };
    limit: number;
  },
): Promise<AffiliateRow[]> {
  // The limit is written into the statement, not sent as a parameter: with `limit $n` Postgres cannot cost the
  // prepared statement's generic plan and re-plans the query on every call. A whole number only, so nothing else
  // can reach the SQL text; each page size is one prepared statement per connection.
  if (!Number.isInteger(filter.limit) || filter.limit < 1 || filter.limit > 1000)
    throw new RangeError(`limit ${filter.limit} is not a page size`);
  return sql<AffiliateRow[]>`
    select ${columns(sql)} from affiliates a join merchants m on m.id = a.merchant_id
    where a.merchant_id = ${merchantId}
      ${filter.status ? sql`and a.status = ${filter.status}` : sql``}
      ${filter.email ? sql`and lower(a.email) = lower(${filter.email})` : sql``}
      ${filter.parentId ? sql`and a.parent_id = ${filter.parentId}` : sql``}
      ${filter.after ? sql`and (a.created_at, a.id) < (${filter.after.created_at}::timestamptz, ${filter.after.id})` : sql``}
    order by a.created_at desc, a.id desc
    limit ${sql.unsafe(String(filter.limit))}`;
}

export async function insertAffiliate(
  sql: Queryable,
  a: {
    id: string;
    merchantId: string;
    slug: string;
    email: string;
    displayName: string;
    status: AffiliateStatus;
    parentId: string | null;
    customCommissionRate: number | null;
  },
): Promise<void> {
  await sql`
    insert into affiliates (id, merchant_id, slug, email, display_name, status, parent_id, custom_commission_rate)
    values (${a.id}, ${a.merchantId}, ${a.slug}, ${a.email}, ${a.displayName}, ${a.status}, ${a.parentId}, ${a.customCommissionRate})`;
}

export async function updateAffiliate(
  sql: Queryable,
  merchantId: string,
  id: string,
  changes: Partial<{
    status: AffiliateStatus;
    display_name: string;
    custom_commission_rate: number | null;
    tier_id: string | null;
  }>,
): Promise<void> {
  await sql`
    update affiliates set ${sql(changes as Record<string, unknown>)}, updated_at = date_trunc('milliseconds', now())
    where merchant_id = ${merchantId} and id = ${id}`;
}

export async function tierExists(sql: Queryable, merchantId: string, tierId: string): Promise<boolean> {
  const [row] = await sql`select 1 from tiers where merchant_id = ${merchantId} and id = ${tierId}`;
  return row !== undefined;
}
