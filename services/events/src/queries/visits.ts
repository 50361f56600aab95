import type { Queryable } from '@platform/shared/db';
import { idTime } from '@platform/shared/ids';
import type { PartitionedTable } from '@platform/shared/partitions';
import type { AffiliateStatus } from '@platform/shared/schemas/affiliates';
import type { ClickDetails } from '../domain/clicks.ts';

/**
 * Visits are partitioned by month: the whole months past VISIT_RETENTION_DAYS are dropped, and the purge deletes
 * the rest of what is past it from the oldest partition left. Two months are made ahead. Each month is indexed on
 * (merchant_id, id), attribution's lookup, and for the clicks list on (merchant_id, created_at, id) and on
 * (merchant_id, affiliate_id, created_at, id) (migration 057).
 */
export const visitPartitions: PartitionedTable = {
  table: 'visits',
  period: 'month',
  keyType: 'timestamptz',
  ahead: 2,
  partitionIndexes: [
    { suffix: 'merchant_id', columns: 'merchant_id, id' },
    { suffix: 'merchant_created', columns: 'merchant_id, created_at, id' },
    { suffix: 'affiliate_created', columns: 'merchant_id, affiliate_id, created_at, id' },
  ],
};

/**
 * A visit or an event is written right after its id is made, so its created_at is within this of the time the id
 * carries (the events service's clock against Postgres's): the lookup reads only the partitions around that time.
 */
const ID_CLOCK_MARGIN_MS = 86_400_000;
/** 10000-01-01T00:00:00Z. */
const LAST_TIMESTAMP_MS = 253_402_300_800_000;

/** Between when (ISO instants) the row with this id of that kind was written; undefined for what is no such id. */
export function madeWithin(prefix: 'vis' | 'evt', id: string): { from: string; to: string } | undefined {
  const madeAt = idTime(prefix, id);
  // An id's 10 time digits reach past year 9999, which Postgres's timestamps do not: such an id was never made.
  if (madeAt === undefined || madeAt + ID_CLOCK_MARGIN_MS >= LAST_TIMESTAMP_MS) return undefined;
  return {
    from: new Date(madeAt - ID_CLOCK_MARGIN_MS).toISOString(),
    to: new Date(madeAt + ID_CLOCK_MARGIN_MS).toISOString(),
  };
}

/** Between when (ISO instants) a visit with this id was written; undefined for what is no visit id. */
export const visitMadeWithin = (id: string) => madeWithin('vis', id);

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
    details: ClickDetails;
    windowDays: number;
  },
): Promise<void> {
  await sql`
    insert into visits (id, merchant_id, affiliate_id, ip_hash, user_agent, fingerprint, landing_url,
                        referrer_host, country, device, expires_at)
    values (${v.id}, ${v.merchantId}, ${v.affiliateId}, ${v.ipHash}, ${v.userAgent}, ${v.fingerprint}, ${v.landingUrl},
            ${v.details.referrerHost}, ${v.details.country}, ${v.details.device},
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
  const made = visitMadeWithin(id);
  if (made === undefined) return undefined;
  const [row] = await sql<VisitRow[]>`
    select v.id, v.affiliate_id, a.status as affiliate_status, v.ip_hash, v.fingerprint,
           v.created_at > now() - make_interval(days => ${windowDays}) as within_window,
           floor(extract(epoch from (v.created_at + make_interval(days => ${windowDays}) - now())))::int as remaining_seconds
    from visits v join affiliates a on a.merchant_id = v.merchant_id and a.id = v.affiliate_id
    where v.merchant_id = ${merchantId} and v.id = ${id}
      and v.created_at >= ${made.from}::timestamptz and v.created_at < ${made.to}::timestamptz`;
  return row;
}

/**
 * Deletes up to `batch` visits of any merchant made more than `days` ago (the retention purge: maintenance across
 * tenants, like the dispatcher's). Several replicas may run it at once: a row another one deleted is skipped. Only
 * the partition straddling the retention has such rows (those wholly past it are dropped): both conditions on
 * created_at confine the statement to it, and (merchant_id, id) is indexed in every partition.
 */
export async function deleteVisitsOlderThan(sql: Queryable, days: number, batch: number): Promise<number> {
  const rows = await sql`
    delete from visits where created_at < now() - make_interval(days => ${days}) and (merchant_id, id) in (
      select merchant_id, id from visits where created_at < now() - make_interval(days => ${days})
      order by created_at limit ${batch})
    returning id`;
  return rows.length;
}

/** A visit as GET /api/v1/clicks answers it (present.ts presentClick): never its IP hash or user agent. */
export interface ClickRow {
  id: string;
  affiliate_id: string;
  landing_url: string | null;
  referrer_host: string | null;
  country: string | null;
  /** Null on visits recorded before the column was (migration 056). */
  device: string | null;
  /** The first non-refund event credited by this visit's cookie (migration 058's index), or null. */
  converted: string | null;
  created_at: Date;
}

/** The page-size bound of listClicks: a limit is written into the statement, so it must be one. */
const CLICKS_PAGE_MAX = 1000;

/**
 * The columns of a click. `converted` is looked up per click on the conversion events' index of the visits they
 * were credited by; an event comes after its click, so only the months since the click are read.
 */
const clickColumns = (sql: Queryable) => sql`
  v.id, v.affiliate_id, v.landing_url, v.referrer_host, v.country, v.device, v.created_at,
  (select e.id from conversion_events e
   where e.merchant_id = v.merchant_id and e.visit_id = v.id and e.attributed_by = 'cookie'
     and e.event_type <> 'refund' and e.created_at >= v.created_at
   order by e.created_at, e.id limit 1) as converted`;

/**
 * A page of the merchant's clicks made within the last `retentionDays` (what the purge has not yet taken of what is
 * past it is not shown either), newest first by (created_at, id): an ordered scan of migration 057's index.
 */
export async function listClicks(
  sql: Queryable,
  merchantId: string,
  f: {
    retentionDays: number;
    affiliateId?: string;
    createdAfter?: string;
    createdBefore?: string;
    after?: { created_at: string; id: string };
    limit: number;
  },
): Promise<ClickRow[]> {
  // Written into the statement, as the other lists do, so that the generic plan is costed for this page size.
  if (!Number.isInteger(f.limit) || f.limit < 1 || f.limit > CLICKS_PAGE_MAX)
    throw new RangeError(`limit ${f.limit} is not a page size`);
  return sql<ClickRow[]>`
    select ${clickColumns(sql)} from visits v
    where v.merchant_id = ${merchantId}
      and v.created_at >= now() - make_interval(days => ${f.retentionDays})
      ${f.affiliateId ? sql`and v.affiliate_id = ${f.affiliateId}` : sql``}
      ${f.createdAfter ? sql`and v.created_at > ${f.createdAfter}::timestamptz` : sql``}
      ${f.createdBefore ? sql`and v.created_at < ${f.createdBefore}::timestamptz` : sql``}
      ${f.after ? sql`and (v.created_at, v.id) < (${f.after.created_at}::timestamptz, ${f.after.id})` : sql``}
    order by v.created_at desc, v.id desc
    limit ${sql.unsafe(String(f.limit))}`;
}

/** One click of the merchant made within the last `retentionDays`, read from the months its id's time allows. */
export async function findClick(
  sql: Queryable,
  merchantId: string,
  id: string,
  retentionDays: number,
): Promise<ClickRow | undefined> {
  const made = visitMadeWithin(id);
  if (made === undefined) return undefined;
  const [row] = await sql<ClickRow[]>`
    select ${clickColumns(sql)} from visits v
    where v.merchant_id = ${merchantId} and v.id = ${id}
      and v.created_at >= ${made.from}::timestamptz and v.created_at < ${made.to}::timestamptz
      and v.created_at >= now() - make_interval(days => ${retentionDays})`;
  return row;
}
