import type { Queryable, Sql } from '@platform/shared/db';
import type { AnalyticsDimension, AnalyticsTimeGrouping } from '@platform/shared/schemas/analytics';
import { wholeUtcDays } from '../domain/analytics.ts';

/**
 * Reads of the analytics rollups (migrations 059, 066 and 068), every one scoped to the merchant and its range of
 * 15-minute buckets [start, end), and to one affiliate when asked. Counts come back as numbers, sums as NUMERIC text.
 */
export interface AnalyticsScope {
  merchantId: string;
  start: Date;
  end: Date;
  affiliateId: string | null;
  currency: string;
}

export interface MeasureSums {
  clicks: number;
  conversions: number;
  /** NUMERIC text, in the scope's currency. */
  revenue: string;
  commissions: string;
}

interface MeasureRow {
  clicks: string;
  conversions: string;
  revenue: string;
  commissions: string;
}

const measures = (r: MeasureRow): MeasureSums => ({
  clicks: Number(r.clicks),
  conversions: Number(r.conversions),
  revenue: r.revenue,
  commissions: r.commissions,
});

const inRange = (sql: Queryable, s: AnalyticsScope) =>
  sql`merchant_id = ${s.merchantId} and bucket >= ${s.start} and bucket < ${s.end}`;

const ofAffiliate = (sql: Queryable, s: AnalyticsScope) =>
  s.affiliateId === null ? sql`` : sql`and affiliate_id = ${s.affiliateId}`;

/**
 * Per bucket and currency: the merchant's totals (one row per 15 minutes) or, for one affiliate, its click and
 * conversion rows (the index on (merchant_id, affiliate_id, bucket)).
 */
const bucketFacts = (sql: Queryable, s: AnalyticsScope) =>
  s.affiliateId === null
    ? sql`select bucket, currency, clicks, conversions, revenue, commissions from analytics_series where ${inRange(sql, s)}`
    : sql`
      select bucket, '' as currency, clicks, 0::bigint as conversions, 0::numeric as revenue, 0::numeric as commissions
      from analytics_clicks where ${inRange(sql, s)} ${ofAffiliate(sql, s)}
      union all
      select bucket, currency, 0, conversions, revenue, commissions
      from analytics_conversions where ${inRange(sql, s)} ${ofAffiliate(sql, s)}`;

export interface SeriesRow extends MeasureSums {
  /** The bucket's start as wall-clock time in the zone, "2026-03-29T00:00:00". */
  local: string;
  /** The instant it stands for. */
  instant: Date;
}

/**
 * Every day, week (from Monday) or month of the zone that the range touches, oldest first, with its sums (zero when
 * nothing happened). The calendar is made on the zone's wall-clock times, so a day of 23 or 25 hours (a DST change)
 * is one bucket; the first and last may be cut by the range. Throws Postgres's error for a zone it does not know.
 */
export async function seriesSums(
  sql: Queryable,
  s: AnalyticsScope,
  unit: AnalyticsTimeGrouping,
  timezone: string,
): Promise<SeriesRow[]> {
  const rows = await sql<(MeasureRow & { local: string; instant: Date })[]>`
    with calendar as (
      select generate_series(
        date_trunc(${unit}, ${s.start}::timestamptz at time zone ${timezone}),
        (${s.end}::timestamptz - interval '1 microsecond') at time zone ${timezone},
        make_interval(days => ${unit === 'day' ? 1 : unit === 'week' ? 7 : 0}, months => ${unit === 'month' ? 1 : 0})
      ) as local
    ), sums as (
      select date_trunc(${unit}, bucket at time zone ${timezone}) as local,
             sum(clicks) as clicks, sum(conversions) as conversions,
             sum(revenue) filter (where currency = ${s.currency}) as revenue,
             sum(commissions) filter (where currency = ${s.currency}) as commissions
      from (${bucketFacts(sql, s)}) f
      group by 1
    )
    select to_char(c.local, 'YYYY-MM-DD"T"HH24:MI:SS') as local, c.local at time zone ${timezone} as instant,
           coalesce(s.clicks, 0)::text as clicks, coalesce(s.conversions, 0)::text as conversions,
           coalesce(s.revenue, 0)::text as revenue, coalesce(s.commissions, 0)::text as commissions
    from calendar c left join sums s on s.local = c.local
    order by c.local`;
  return rows.map((r) => ({ local: r.local, instant: r.instant, ...measures(r) }));
}

/** The rollup column of each dimension: '' in it stands for none. */
const DIMENSION_COLUMNS: Record<AnalyticsDimension, string> = {
  affiliate: 'affiliate_id',
  coupon: 'coupon',
  country: 'country',
  referrer: 'referrer',
  landing_page: 'landing_page',
  device: 'device',
  event_type: 'event_type',
};
/** Clicks carry no coupon and no event type: grouped by those, clicks are 0. */
const CLICK_DIMENSIONS = new Set<AnalyticsDimension>(['affiliate', 'country', 'referrer', 'landing_page', 'device']);
/** The dimensions with a click rollup of their own (migration 066); the `dimension` value it keeps them under. */
const OWN_CLICK_ROLLUP = new Set<AnalyticsDimension>(['country', 'referrer', 'landing_page', 'device']);

export interface DimensionRow extends MeasureSums {
  /** The dimension's value; '' for none. */
  key: string;
}

/**
 * The dimension's top `limit` values by conversions (then by value, none last), then, while fewer, those with the most clicks;
 * with every measure. Ranking reads the conversion rollups alone, so the clicks are summed for the chosen values
 * only: for the affiliates of a large merchant that is the difference between a few rows and every affiliate's.
 * Countries, referrers, landing pages and devices have few values: their clicks are summed for every value at once
 * (`clickSums`), from a rollup of their own without `affiliate_id`, which also names the values that fill the top.
 */
export async function dimensionSums(
  sql: Sql,
  s: AnalyticsScope,
  dimension: AnalyticsDimension,
  limit: number,
): Promise<DimensionRow[]> {
  const column = sql(DIMENSION_COLUMNS[dimension]);
  // Conversions are summed as int4 (bigint's sum is NUMERIC, several times slower over a row per conversion); one
  // row of either rollup (a value's 15 minutes, or its UTC day) holds far fewer than 2^31. The hash of every value in
  // the range gets the memory it needs rather than spilling to disk: a hundred thousand affiliates take some tens of
  // MB, for this statement only.
  const ranked = await sql.begin(async (tx) => {
    await tx`set local work_mem = '64MB'`;
    return tx<{ key: string }[]>`
      select key from (${conversionRows(tx, s, dimension)}) f
      group by 1
      having sum(conversions::int4) <> 0 or bool_or(commissioned)
      order by sum(conversions::int4) desc, key = '', 1
      limit ${limit}`;
  });
  const keys = ranked.map((r) => r.key);
  let clicks = new Map<string, string>();
  if (OWN_CLICK_ROLLUP.has(dimension)) {
    const rows = await clickSums(sql, s, dimension, keys, limit - keys.length);
    for (const r of rows) if (r.more) keys.push(r.key);
    clicks = new Map(rows.map((r) => [r.key, r.clicks]));
  } else if (CLICK_DIMENSIONS.has(dimension)) {
    if (keys.length < limit) {
      const more = await sql<{ key: string }[]>`
        select ${column} as key from analytics_clicks
        where ${inRange(sql, s)} ${ofAffiliate(sql, s)} and not (${column} = any(${keys}::text[]))
        group by 1 having sum(clicks) > 0
        order by sum(clicks) desc, ${column} = '', 1
        limit ${limit - keys.length}`;
      for (const r of more) keys.push(r.key);
    }
    if (keys.length > 0) {
      const rows = await sql<{ key: string; clicks: string }[]>`
        select ${column} as key, sum(clicks)::text as clicks from analytics_clicks
        where ${inRange(sql, s)} ${ofAffiliate(sql, s)} and ${column} = any(${keys}::text[])
        group by 1`;
      clicks = new Map(rows.map((r) => [r.key, r.clicks]));
    }
  }
  if (keys.length === 0) return [];
  const sums = await sql<{ key: string; conversions: string; revenue: string; commissions: string }[]>`
    select key, sum(conversions)::text as conversions,
           coalesce(sum(revenue) filter (where currency = ${s.currency}), 0)::text as revenue,
           coalesce(sum(commissions) filter (where currency = ${s.currency}), 0)::text as commissions
    from (${conversionRows(sql, s, dimension)}) f
    where key = any(${keys}::text[])
    group by 1`;
  const conversions = new Map(sums.map((r) => [r.key, r]));
  return keys.map((key) => {
    const c = conversions.get(key);
    return {
      key,
      ...measures({
        clicks: clicks.get(key) ?? '0',
        conversions: c?.conversions ?? '0',
        revenue: c?.revenue ?? '0',
        commissions: c?.commissions ?? '0',
      }),
    };
  });
}

/**
 * One pass over a click dimension's clicks in the range: the clicks of each of `keys`, and after them (`more`) the
 * `more` other values with the most clicks, in that order (none last among equals). Without an affiliate, the whole
 * UTC days of the range from migration 066's daily rollup (a value and day is one row there, whatever the
 * affiliates) and the partial days at its ends, less than a day each, from analytics_clicks. For one affiliate, from
 * that affiliate's rows of analytics_clicks (its index), which hold no more than its own clicks.
 */
async function clickSums(
  sql: Sql,
  s: AnalyticsScope,
  dimension: AnalyticsDimension,
  keys: string[],
  more: number,
): Promise<{ key: string; clicks: string; more: boolean }[]> {
  return sql<{ key: string; clicks: string; more: boolean }[]>`
    with sums as (
      select key, sum(clicks) as clicks from (${clickRows(sql, s, dimension)}) f group by 1
    ), others as (
      select key, clicks, row_number() over (order by clicks desc, key = '', key) as place
      from sums where clicks > 0 and not (key = any(${keys}::text[]))
      order by place limit ${more}
    )
    select key, clicks::text as clicks, false as more, 0::bigint as place from sums where key = any(${keys}::text[])
    union all
    select key, clicks::text, true, place from others
    order by more, place`;
}

/** The (key, clicks) rows of a click dimension in the scope, whose sums by key are the dimension's clicks. */
function clickRows(sql: Sql, s: AnalyticsScope, dimension: AnalyticsDimension) {
  const column = sql(DIMENSION_COLUMNS[dimension]);
  const raw = (from: Date, to: Date) => sql`
    select ${column} as key, clicks from analytics_clicks
    where merchant_id = ${s.merchantId} and bucket >= ${from} and bucket < ${to} ${ofAffiliate(sql, s)}`;
  const days = s.affiliateId === null ? wholeUtcDays(s.start, s.end) : null;
  if (days === null) return raw(s.start, s.end);
  return sql`
    ${raw(s.start, days.from)}
    union all
    select key, clicks from analytics_click_dimensions_daily
    where merchant_id = ${s.merchantId} and dimension = ${dimension} and day >= ${days.from} and day < ${days.to}
    union all
    ${raw(days.to, s.end)}`;
}

/**
 * The (key, currency, conversions, revenue, commissions, commissioned) rows of a dimension in the scope, whose sums
 * by key are the dimension's; `commissioned` says whether a row stands for commissions that are not zero. Without an
 * affiliate, every dimension but the affiliate reads its whole UTC days from migration 068's daily rollup and the
 * partial days at the range's ends from analytics_conversions, as clickRows does; otherwise analytics_conversions
 * alone (for the affiliate ranking, its index on (merchant_id, bucket) that covers the columns read).
 */
function conversionRows(sql: Queryable, s: AnalyticsScope, dimension: AnalyticsDimension) {
  const column = sql(DIMENSION_COLUMNS[dimension]);
  const raw = (from: Date, to: Date) => sql`
    select ${column} as key, currency, conversions, revenue, commissions, commissions <> 0 as commissioned
    from analytics_conversions
    where merchant_id = ${s.merchantId} and bucket >= ${from} and bucket < ${to} ${ofAffiliate(sql, s)}`;
  const days = s.affiliateId === null && dimension !== 'affiliate' ? wholeUtcDays(s.start, s.end) : null;
  if (days === null) return raw(s.start, s.end);
  return sql`
    ${raw(s.start, days.from)}
    union all
    select key, currency, conversions, revenue, commissions, commissioned <> 0
    from analytics_conversion_dimensions_daily
    where merchant_id = ${s.merchantId} and dimension = ${dimension} and day >= ${days.from} and day < ${days.to}
    union all
    ${raw(days.to, s.end)}`;
}

export interface CurrencySums {
  currency: string;
  conversions: number;
  revenue: string;
  commissions: string;
}

/** Conversions, revenue and commissions per currency over the whole range (for other_currencies). */
export async function currencySums(sql: Queryable, s: AnalyticsScope): Promise<CurrencySums[]> {
  const rows = await sql<{ currency: string; conversions: string; revenue: string; commissions: string }[]>`
    select currency, sum(conversions)::text as conversions, sum(revenue)::text as revenue,
           sum(commissions)::text as commissions
    from (${bucketFacts(sql, s)}) f
    where currency <> ''
    group by 1 order by 1`;
  return rows.map((r) => ({
    currency: r.currency,
    conversions: Number(r.conversions),
    revenue: r.revenue,
    commissions: r.commissions,
  }));
}

/** The display names of the merchant's affiliates among `ids`. */
export async function affiliateNames(sql: Queryable, merchantId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<{ id: string; display_name: string }[]>`
    select id, display_name from affiliates where merchant_id = ${merchantId} and id = any(${ids}::text[])`;
  return new Map(rows.map((r) => [r.id, r.display_name]));
}
