/**
 * A date range as the Analytics page offers it (presets or custom days, in a time zone) turned into the instants the
 * API takes. Free of the DOM: a test runs it under Node. Only Intl: the zone's offset at an instant is read from
 * the wall clock Intl formats there.
 */

export type Preset = '7' | '30' | '90' | 'month' | 'custom';
export interface Range {
  preset: Preset;
  timezone: string;
  /** Custom range: the first and the last day shown (YYYY-MM-DD, days of `timezone`). */
  from: string;
  to: string;
}

/** The range as the API takes it: instants, `end` excluded. */
export interface Span {
  start: string;
  end: string;
  timezone: string;
}

const DAY = 86_400_000;

/** How far `zone`'s wall clock is ahead of UTC at `at`, in ms. */
function zoneOffset(zone: string, at: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(at));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return (
    Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second')) - Math.floor(at / 1000) * 1000
  );
}

/** The instant a day (YYYY-MM-DD) starts in `zone`: its offset read twice, as a DST change may fall between. */
export function zonedMidnight(day: string, zone: string): number {
  const wall = Date.parse(`${day}T00:00:00Z`);
  return wall - zoneOffset(zone, wall - zoneOffset(zone, wall));
}

/** Today in `zone`, as YYYY-MM-DD. */
export const today = (zone: string, now: number) => new Date(now + zoneOffset(zone, now)).toISOString().slice(0, 10);

/** The instants a range stands for, at `now`: the last N days up to now, this month in the zone, or the days chosen. */
export function rangeSpan(r: Range, now: number): Span {
  const iso = (ms: number) => new Date(ms).toISOString();
  if (r.preset === 'custom') {
    const next = new Date(Date.parse(`${r.to}T00:00:00Z`) + DAY).toISOString().slice(0, 10);
    return {
      start: iso(zonedMidnight(r.from, r.timezone)),
      end: iso(zonedMidnight(next, r.timezone)),
      timezone: r.timezone,
    };
  }
  if (r.preset === 'month') {
    const start = zonedMidnight(`${today(r.timezone, now).slice(0, 7)}-01`, r.timezone);
    return { start: iso(start), end: iso(now), timezone: r.timezone };
  }
  return { start: iso(now - Number(r.preset) * DAY), end: iso(now), timezone: r.timezone };
}
