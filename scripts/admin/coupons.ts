import type { Sql } from '@platform/shared/db';
import { isUniqueViolation } from '@platform/shared/db';
import { isId, newId } from '@platform/shared/ids';
import { presentCoupon } from '@platform/events/present';
import { affiliateExists } from '@platform/events/queries/affiliates';
import { deleteCoupon, insertCoupon, listCoupons } from '@platform/events/queries/coupons';
import { UsageError } from './commands.ts';

/** Operator commands for coupon codes: the same queries and output shape as the events service's API. */

const CODE = /^[A-Za-z0-9_-]{2,64}$/;

export async function createCoupon(sql: Sql, merchantId: string, affiliateId: string, code: string) {
  await assertMerchant(sql, merchantId);
  if (!CODE.test(code)) throw new UsageError('--code must be 2 to 64 letters, digits, _ or -');
  if (!isId('aff', affiliateId) || !(await affiliateExists(sql, merchantId, affiliateId))) {
    throw new UsageError(`no affiliate ${affiliateId} at merchant ${merchantId}`);
  }
  try {
    return presentCoupon(await insertCoupon(sql, { id: newId('cpn'), merchantId, affiliateId, code }));
  } catch (err) {
    if (isUniqueViolation(err, 'coupons_merchant_code'))
      throw new UsageError(`merchant ${merchantId} already has a coupon ${code} (codes are case-insensitive)`, {
        cause: err,
      });
    throw err;
  }
}

/** Every coupon of the merchant (or of one affiliate), newest first. */
export async function listAllCoupons(sql: Sql, merchantId: string, affiliateId?: string) {
  await assertMerchant(sql, merchantId);
  if (affiliateId !== undefined && !isId('aff', affiliateId))
    throw new UsageError(`--affiliate must be an affiliate id (aff_…)`);
  const all = [];
  let after: { created_at: string; id: string } | undefined;
  for (;;) {
    const page = await listCoupons(sql, merchantId, { affiliateId, after, limit: 500 });
    all.push(...page.map(presentCoupon));
    const last = page[page.length - 1];
    if (page.length < 500 || !last) return all;
    after = { created_at: last.created_at.toISOString(), id: last.id };
  }
}

export async function removeCoupon(sql: Sql, merchantId: string, couponId: string) {
  await assertMerchant(sql, merchantId);
  if (!isId('cpn', couponId) || !(await deleteCoupon(sql, merchantId, couponId)))
    throw new UsageError(`no coupon ${couponId} at merchant ${merchantId}`);
  return { id: couponId, deleted: true };
}

async function assertMerchant(sql: Sql, merchantId: string): Promise<void> {
  const [row] = isId('mer', merchantId) ? await sql`select 1 from merchants where id = ${merchantId}` : [];
  if (!row) throw new UsageError(`no merchant ${merchantId}`);
}
