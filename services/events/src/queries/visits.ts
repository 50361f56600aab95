import type { Queryable } from '@platform/shared/db';
import type { AffiliateStatus } from '@platform/shared/schemas/affiliates';

export async function insertVisit(
  sql: Queryable,
  v: {
    id: string;
    merchantId: string;
    affiliateId: string;
    ipHash: string | null;
    userAgent: string | null;
    fingerprint: string | null;
    landingUrl: string | null;
    windowDays: number;
  },
): Promise<void> {
  await sql`
    insert into visits (id, merchant_id, affiliate_id, ip_hash, user_agent, fingerprint, landing_url, expires_at)
    values (${v.id}, ${v.merchantId}, ${v.affiliateId}, ${v.ipHash}, ${v.userAgent}, ${v.fingerprint}, ${v.landingUrl},
            date_trunc('milliseconds', now()) + make_interval(days => ${v.windowDays}))`;
}

export interface VisitRow {
  id: string;
  affiliate_id: string;
  affiliate_status: AffiliateStatus;
  ip_hash: string | null;
  fingerprint: string | null;
  /** Made within the merchant's current attribution window (what counts, not the expires_at of the time). */
  within_window: boolean;
  /** Seconds of that window left; zero or less once it has passed. */
  remaining_seconds: number;
}

export async function findVisit(
  sql: Queryable,
  merchantId: string,
  id: string,
  windowDays: number,
): Promise<VisitRow | undefined> {
  const [row] = await sql<VisitRow[]>`
    select v.id, v.affiliate_id, a.status as affiliate_status, v.ip_hash, v.fingerprint,
           v.created_at > now() - make_interval(days => ${windowDays}) as within_window,
           floor(extract(epoch from (v.created_at + make_interval(days => ${windowDays}) - now())))::int as remaining_seconds
    from visits v join affiliates a on a.merchant_id = v.merchant_id and a.id = v.affiliate_id
    where v.merchant_id = ${merchantId} and v.id = ${id}`;
  return row;
}

/**
 * Deletes up to `batch` visits of any merchant made more than `days` ago (the retention purge: maintenance across
 * tenants, like the dispatcher's). Several replicas may run it at once: a row another one deleted is skipped.
 */
export async function deleteVisitsOlderThan(sql: Queryable, days: number, batch: number): Promise<number> {
  const rows = await sql`
    delete from visits where id in (
      select id from visits where created_at < now() - make_interval(days => ${days}) order by created_at limit ${batch})
    returning id`;
  return rows.length;
}
