import type { Queryable } from '@platform/shared/db';
import type { AffiliateStatus } from '@platform/shared/schemas/affiliates';
import type { VisitRow } from './visits.ts';

/** A visit as read, before the merchant's attribution window is applied: its age by the database's clock. */
export type VisitSeen = Omit<VisitRow, 'within_window' | 'remaining_seconds'> & { age_seconds: number };

/**
 * What recording an event reads, in one round trip: the merchant's settings (as JSON text), the visit `visitId`
 * names when it is one of this merchant's (with its affiliate's status and its age), and the affiliate owning the coupon code (case-insensitive) with its status. Undefined when the merchant has no row.
 */
export async function findAttributionContext(
  sql: Queryable,
  merchantId: string,
  visitId: string | null,
  coupon: string | null,
): Promise<{ settings: string; visit: VisitSeen | undefined; couponOwner: { affiliate_id: string; status: AffiliateStatus } | undefined } | undefined> {
  const [row] = await sql<
    {
      settings: string;
      v_id: string | null;
      v_affiliate_id: string;
      v_affiliate_status: AffiliateStatus;
      v_ip_hash: string | null;
      v_fingerprint: string | null;
      v_age_seconds: number;
      c_affiliate_id: string | null;
      c_status: AffiliateStatus;
    }[]
  >`
    select m.settings::text as settings,
           v.id as v_id, v.affiliate_id as v_affiliate_id, v.status as v_affiliate_status, v.ip_hash as v_ip_hash,
           v.fingerprint as v_fingerprint,
           extract(epoch from (now() - v.created_at))::float8 as v_age_seconds,
           c.affiliate_id as c_affiliate_id, c.status as c_status
    from merchants m
    left join lateral (
      select v.id, v.affiliate_id, a.status, v.ip_hash, v.fingerprint, v.created_at
      from visits v join affiliates a on a.merchant_id = v.merchant_id and a.id = v.affiliate_id
      where v.merchant_id = m.id and v.id = ${visitId}::text
    ) v on true
    left join lateral (
      select c.affiliate_id, a.status
      from coupons c join affiliates a on a.merchant_id = c.merchant_id and a.id = c.affiliate_id
      where c.merchant_id = m.id and lower(c.code) = lower(${coupon}::text)
    ) c on true
    where m.id = ${merchantId}`;
  if (!row) return undefined;
  return {
    settings: row.settings,
    visit:
      row.v_id === null
        ? undefined
        : {
            id: row.v_id,
            affiliate_id: row.v_affiliate_id,
            affiliate_status: row.v_affiliate_status,
            ip_hash: row.v_ip_hash,
            fingerprint: row.v_fingerprint,
            age_seconds: row.v_age_seconds,
          },
    couponOwner: row.c_affiliate_id === null ? undefined : { affiliate_id: row.c_affiliate_id, status: row.c_status },
  };
}
