import type { Queryable } from '@platform/shared/db';
import type { AffiliateStatus } from '@platform/shared/schemas/affiliates';
import type { VisitRow } from './visits.ts';

/**
 * What recording an event reads, in one round trip: the merchant's settings (as JSON text), the visit `visitId`
 * names when it is one of this merchant's (with its affiliate's status and whether it was made within `windowDays`),
 * and the affiliate owning the coupon code (case-insensitive) with its status. Undefined when the merchant has no row.
 */
export async function findAttributionContext(
  sql: Queryable,
  merchantId: string,
  visitId: string | null,
  coupon: string | null,
  windowDays: number,
): Promise<{ settings: string; visit: VisitRow | undefined; couponOwner: { affiliate_id: string; status: AffiliateStatus } | undefined } | undefined> {
  const [row] = await sql<
    {
      settings: string;
      v_id: string | null;
      v_affiliate_id: string;
      v_affiliate_status: AffiliateStatus;
      v_ip_hash: string | null;
      v_fingerprint: string | null;
      v_within_window: boolean;
      v_remaining_seconds: number;
      c_affiliate_id: string | null;
      c_status: AffiliateStatus;
    }[]
  >`
    select m.settings::text as settings,
           v.id as v_id, v.affiliate_id as v_affiliate_id, v.status as v_affiliate_status, v.ip_hash as v_ip_hash,
           v.fingerprint as v_fingerprint,
           v.created_at > now() - make_interval(days => ${windowDays}) as v_within_window,
           floor(extract(epoch from (v.created_at + make_interval(days => ${windowDays}) - now())))::int as v_remaining_seconds,
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
            within_window: row.v_within_window,
            remaining_seconds: row.v_remaining_seconds,
          },
    couponOwner: row.c_affiliate_id === null ? undefined : { affiliate_id: row.c_affiliate_id, status: row.c_status },
  };
}
