import type { Queryable } from '@platform/shared/db';

export interface CouponRow {
  id: string;
  merchant_id: string;
  affiliate_id: string;
  code: string;
  created_at: Date;
}

const columns = (sql: Queryable) => sql`id, merchant_id, affiliate_id, code, created_at`;

export async function insertCoupon(
  sql: Queryable,
  c: { id: string; merchantId: string; affiliateId: string; code: string },
): Promise<CouponRow> {
  const [row] = await sql<CouponRow[]>`
    insert into coupons (id, merchant_id, affiliate_id, code)
    values (${c.id}, ${c.merchantId}, ${c.affiliateId}, ${c.code})
    returning ${columns(sql)}`;
  return row!;
}

export async function listCoupons(
  sql: Queryable,
  merchantId: string,
  filter: { affiliateId?: string; after?: { created_at: string; id: string }; limit: number },
): Promise<CouponRow[]> {
  return sql<CouponRow[]>`
    select ${columns(sql)} from coupons
    where merchant_id = ${merchantId}
      ${filter.affiliateId ? sql`and affiliate_id = ${filter.affiliateId}` : sql``}
      ${filter.after ? sql`and (created_at, id) < (${filter.after.created_at}::timestamptz, ${filter.after.id})` : sql``}
    order by created_at desc, id desc
    limit ${filter.limit}`;
}

/** True when a row was deleted: false for an unknown id and for another merchant's coupon alike. */
export async function deleteCoupon(sql: Queryable, merchantId: string, id: string): Promise<boolean> {
  const rows = await sql`delete from coupons where merchant_id = ${merchantId} and id = ${id} returning id`;
  return rows.length > 0;
}
