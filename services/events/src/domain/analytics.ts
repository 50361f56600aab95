import { isCirculatingCurrency } from '@platform/shared/currencies';
import { invalidInput } from '@platform/shared/errors';
import {
  ANALYTICS_TIME_GROUPINGS,
  type AnalyticsGrouping,
  type AnalyticsQuery,
  type AnalyticsTimeGrouping,
} from '@platform/shared/schemas/analytics';

const DAY_MS = 86_400_000;
const DEFAULT_RANGE_DAYS = 30;
export const DEFAULT_DIMENSION_LIMIT = 25;
/** Rollup buckets (migration 059): every instant a range starts or ends at is taken down to one of these. */
export const BUCKET_MS = 15 * 60_000;

/** What GET /api/v1/analytics asks for, checked and with its defaults. */
export interface AnalyticsRequest {
  groupBy: AnalyticsGrouping;
  /** The range, [start, end), on 15-minute boundaries. */
  start: Date;
  end: Date;
  timezone: string;
  affiliateId: string | null;
  currency: string;
  limit: number;
}

export const isTimeGrouping = (g: AnalyticsGrouping): g is AnalyticsTimeGrouping =>
  (ANALYTICS_TIME_GROUPINGS as readonly string[]).includes(g);

/**
 * A name the platform's Intl knows as a time zone; Postgres shares the IANA database (checked again by its query).
 * Not an offset ('+05:30', '-03'), which Intl takes as one but Postgres reads as a POSIX zone, east and west
 * swapped: a name must start with a letter.
 */
export function isTimeZone(name: string): boolean {
  if (!/^[A-Za-z]/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Two calendar years after `at` (UTC): the widest range asked for at once. */
const twoYearsAfter = (at: Date): Date => {
  const d = new Date(at);
  d.setUTCFullYear(d.getUTCFullYear() + 2);
  return d;
};

const floorToBucket = (ms: number) => Math.floor(ms / BUCKET_MS) * BUCKET_MS;

/**
 * The query (already valid against its schema) with its defaults: the last 30 days to now, UTC, the merchant's
 * currency. Instants are widened to the 15-minute buckets they fall in, the rollups' grain. Refuses, naming the
 * parameter, an unknown time zone or currency, an end not after the start, and a range wider than two years.
 */
export function analyticsRequest(query: AnalyticsQuery, merchantCurrency: string, now: Date): AnalyticsRequest {
  const timezone = query.timezone ?? 'UTC';
  if (!isTimeZone(timezone)) throw invalidInput('timezone', 'must be an IANA time zone name, such as Europe/Paris');
  const endMs = query.end === undefined ? now.getTime() : Date.parse(query.end);
  const startMs = query.start === undefined ? endMs - DEFAULT_RANGE_DAYS * DAY_MS : Date.parse(query.start);
  const start = new Date(floorToBucket(startMs));
  const end = new Date(Math.max(floorToBucket(endMs + BUCKET_MS - 1), start.getTime()));
  if (endMs <= startMs) throw invalidInput(query.end === undefined ? 'start' : 'end', 'must be after start');
  if (end > twoYearsAfter(start))
    throw invalidInput(query.end === undefined ? 'start' : 'end', 'start and end must be at most 2 years apart');
  if (query.currency !== undefined && !isCirculatingCurrency(query.currency))
    throw invalidInput('currency', 'must be the ISO 4217 code of a currency in circulation');
  return {
    groupBy: query.group_by ?? 'day',
    start,
    end,
    timezone,
    affiliateId: query.affiliate_id ?? null,
    currency: query.currency ?? merchantCurrency,
    limit: query.limit ?? DEFAULT_DIMENSION_LIMIT,
  };
}

/**
 * The whole UTC days inside [start, end) (both on 15-minute boundaries): what a click-dimension grouping reads from
 * the daily rollup (migration 066); the rest at either end, less than a day each, comes from analytics_clicks.
 * Null when the range holds no whole UTC day.
 */
export function wholeUtcDays(start: Date, end: Date): { from: Date; to: Date } | null {
  const from = Math.ceil(start.getTime() / DAY_MS) * DAY_MS;
  const to = Math.floor(end.getTime() / DAY_MS) * DAY_MS;
  return from < to ? { from: new Date(from), to: new Date(to) } : null;
}

/**
 * A bucket's start as the API shows it: the wall-clock time in its zone with that zone's offset then
 * ("2026-03-29T00:00:00+01:00"), from the local time Postgres computed and the instant it stands for.
 */
export function bucketKey(local: string, instant: Date): string {
  const asUtc = Date.parse(`${local}Z`);
  const offsetMin = Math.round((asUtc - instant.getTime()) / 60_000);
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${local}${sign}${hh}:${mm}`;
}
