import type { Queryable } from '@platform/shared/db';
import type { AffiliateStatus } from '@platform/shared/schemas/affiliates';
import { unnestColumns } from '@platform/shared/unnest';
import { visitMadeWithin, type VisitRow } from './visits.ts';

/** A visit as read, before the merchant's attribution window is applied: its age by the database's clock. */
export type VisitSeen = Omit<VisitRow, 'within_window' | 'remaining_seconds'> & { age_seconds: number };

export interface AttributionContext {
  /** The merchant's settings as JSON text. */
  settings: string;
  visit: VisitSeen | undefined;
  couponOwner: { affiliate_id: string; status: AffiliateStatus } | undefined;
}

export interface AttributionLookup {
  merchantId: string;
  visitId: string | null;
  coupon: string | null;
}

const lookupColumns = unnestColumns({
  merchantId: (l: AttributionLookup) => l.merchantId,
  visitId: (l: AttributionLookup) => l.visitId,
  coupon: (l: AttributionLookup) => l.coupon,
  visitFrom: (l: AttributionLookup) => (l.visitId === null ? null : (visitMadeWithin(l.visitId)?.from ?? null)),
  visitTo: (l: AttributionLookup) => (l.visitId === null ? null : (visitMadeWithin(l.visitId)?.to ?? null)),
});

/**
 * What recording events reads, for any number of events in one round trip: per lookup, the merchant's settings (as
 * JSON text), the visit `visitId` names when it is one of that merchant's (with its affiliate's status and its
 * age), and the affiliate owning the coupon code (case-insensitive) with its status. Answers one entry per lookup,
 * in order; undefined where the merchant has no row. Every join is on the lookup's own merchant.
 *
 * Run it on the events service's attribution pool (`connectDatabase` with `genericPlans`), whose connections use
 * generic plans. Left to choose, Postgres planned this statement afresh on almost every call, planning costing
 * several times the execution, because the generic plan costs the unnest at ten rows and so looks dearer than a
 * custom plan for the few events of most batches. The generic plan is the same nested loop of probes by primary key and unique index (the merchant's
 * row, its visit, the coupon's owner). `test/perf/attribution-plans.happy.test.ts` counts the plans.
 */
export async function findAttributionContexts(
  sql: Queryable,
  lookups: AttributionLookup[],
): Promise<(AttributionContext | undefined)[]> {
  const c = lookupColumns(lookups);
  const rows = await sql<
    {
      n: number;
      settings: string | null;
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
    select r.n::int as n, m.settings::text as settings,
           v.id as v_id, v.affiliate_id as v_affiliate_id, v.status as v_affiliate_status, v.ip_hash as v_ip_hash,
           v.fingerprint as v_fingerprint,
           extract(epoch from (now() - v.created_at))::float8 as v_age_seconds,
           c.affiliate_id as c_affiliate_id, c.status as c_status
    from unnest(${c.merchantId}::text[], ${c.visitId}::text[], ${c.coupon}::text[], ${c.visitFrom}::timestamptz[],
                ${c.visitTo}::timestamptz[]) with ordinality as r(merchant_id, visit_id, coupon, visit_from, visit_to, n)
    left join merchants m on m.id = r.merchant_id
    left join lateral (
      select v.id, v.affiliate_id, a.status, v.ip_hash, v.fingerprint, v.created_at
      from visits v join affiliates a on a.merchant_id = v.merchant_id and a.id = v.affiliate_id
      where v.merchant_id = r.merchant_id and v.id = r.visit_id
        and v.created_at >= r.visit_from and v.created_at < r.visit_to
    ) v on true
    left join lateral (
      select c.affiliate_id, a.status
      from coupons c join affiliates a on a.merchant_id = c.merchant_id and a.id = c.affiliate_id
      where c.merchant_id = r.merchant_id and lower(c.code) = lower(r.coupon)
    ) c on true`;
  const found: (AttributionContext | undefined)[] = new Array<AttributionContext | undefined>(lookups.length).fill(
    undefined,
  );
  for (const row of rows) {
    if (row.settings === null) continue;
    found[row.n - 1] = {
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
  return found;
}
