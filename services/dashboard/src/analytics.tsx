import { useMemo, useState } from 'preact/hooks';
import { api, unwrap, type Schemas } from './api.ts';
import { DailyChart } from './chart.tsx';
import { toCsv } from './csv.ts';
import { useLoad } from './hooks.ts';
import { rangeSpan, today, type Preset, type Range, type Span } from './range.ts';
import { Field, formatMoney, Loaded } from './ui.tsx';

/**
 * What the Analytics page and an affiliate's page share: the date range with its presets and time zone, and the
 * series of one measure over time (from GET /api/v1/analytics by day), which downloads as a CSV file. Their tables
 * are in analytics-tables.tsx.
 */

const PRESETS: { value: Preset; label: string }[] = [
  { value: '7', label: 'Last 7 days' },
  { value: '30', label: 'Last 30 days' },
  { value: '90', label: 'Last 90 days' },
  { value: 'month', label: 'This month' },
  { value: 'custom', label: 'Custom' },
];

const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** The range chosen on the page and its span (taken again when the range changes, not on every render). */
export function useRange() {
  const zone = browserZone();
  const day = today(zone, Date.now());
  const [range, setRange] = useState<Range>({ preset: '30', timezone: zone, from: day, to: day });
  const span = useMemo(() => rangeSpan(range, Date.now()), [range]);
  return { range, span, set: (change: Partial<Range>) => setRange((r) => ({ ...r, ...change })) };
}

export function RangeControls(props: { range: Range; set: (change: Partial<Range>) => void }) {
  const { range, set } = props;
  const zones = useMemo(() => {
    const all = Intl.supportedValuesOf('timeZone');
    return all.includes(range.timezone) ? all : [range.timezone, ...all];
  }, []);
  return (
    <form class="inline-form" aria-label="Date range" onSubmit={(e) => e.preventDefault()}>
      <Field label="Range">
        <select value={range.preset} onChange={(e) => set({ preset: e.currentTarget.value as Preset })}>
          {PRESETS.map((p) => (
            <option key={p.value} value={p.value}>
              {p.label}
            </option>
          ))}
        </select>
      </Field>
      {range.preset === 'custom' ? (
        <>
          <Field label="From">
            <input
              type="date"
              value={range.from}
              max={range.to}
              onChange={(e) => set({ from: e.currentTarget.value })}
            />
          </Field>
          <Field label="To">
            <input type="date" value={range.to} min={range.from} onChange={(e) => set({ to: e.currentTarget.value })} />
          </Field>
        </>
      ) : null}
      <Field label="Time zone">
        <select value={range.timezone} onChange={(e) => set({ timezone: e.currentTarget.value })}>
          {zones.map((z) => (
            <option key={z} value={z}>
              {z}
            </option>
          ))}
        </select>
      </Field>
    </form>
  );
}

type Analytics = Schemas['Analytics'];
type Row = Schemas['AnalyticsRow'];
export type Dimension = 'affiliate' | 'coupon' | 'country' | 'referrer' | 'landing_page' | 'device';
type Grouping = 'day' | Dimension;
type Measure = 'clicks' | 'conversions' | 'revenue' | 'commissions';
const MEASURES: { value: Measure; label: string; color: string }[] = [
  { value: 'clicks', label: 'Clicks', color: '#1d4ed8' },
  { value: 'conversions', label: 'Conversions', color: '#6d28d9' },
  { value: 'revenue', label: 'Revenue', color: '#047857' },
  { value: 'commissions', label: 'Commissions', color: '#b45309' },
];

/** The four measures' column names, money ones with their currency: the tables' and the CSV files' headers. */
export const measureColumns = (currency: string) => [
  'Clicks',
  'Conversions',
  `Revenue (${currency})`,
  `Commissions (${currency})`,
];

/** A row's four measures as the API gives them (money as exact decimals): the CSV's cells. */
export const measureCells = (r: Row) => [r.clicks, r.conversions, r.revenue, r.commissions];

/** The analytics for `span` (and one affiliate), grouped as asked. */
export async function loadAnalytics(
  span: Span,
  query: { group_by: Grouping; affiliate_id?: string; limit?: number },
): Promise<Analytics> {
  return unwrap(
    await api.GET('/api/v1/analytics', {
      params: { query: { start: span.start, end: span.end, timezone: span.timezone, ...query } },
    }),
  );
}

/** The radio group that switches the measure a chart shows (here, and on the portal's Performance page). */
export function MeasurePicker<M extends string>(props: {
  measures: readonly { value: M; label: string }[];
  value: M;
  onChange: (measure: M) => void;
}) {
  return (
    <fieldset>
      <legend>Measure</legend>
      {props.measures.map((m) => (
        <label class="choice" key={m.value}>
          <input
            type="radio"
            name="measure"
            value={m.value}
            checked={props.value === m.value}
            onChange={() => props.onChange(m.value)}
          />
          {m.label}
        </label>
      ))}
    </fieldset>
  );
}

/** One measure by day over the range (switchable), and the whole series as a CSV file. */
export function SeriesSection(props: { span: Span; affiliateId?: string; fileName: string }) {
  const { span, affiliateId } = props;
  const series = useLoad(
    () => loadAnalytics(span, { group_by: 'day', ...(affiliateId ? { affiliate_id: affiliateId } : {}) }),
    [span, affiliateId],
  );
  const [measure, setMeasure] = useState<Measure>('clicks');
  return (
    <section aria-labelledby="series-heading">
      <h2 id="series-heading">Over time</h2>
      <MeasurePicker measures={MEASURES} value={measure} onChange={setMeasure} />
      <Loaded state={series} what="the series">
        {(a) => <SeriesChart analytics={a} measure={measure} fileName={props.fileName} />}
      </Loaded>
    </section>
  );
}

function SeriesChart(props: { analytics: Analytics; measure: Measure; fileName: string }) {
  const a = props.analytics;
  const m = MEASURES.find((x) => x.value === props.measure)!;
  const money = m.value === 'revenue' || m.value === 'commissions';
  // A bucket's key is its start as wall-clock time in the zone: its first ten characters are the local day.
  const days = useMemo(() => a.data.map((r) => r.key!.slice(0, 10)), [a]);
  const series = useMemo(
    () => [{ label: m.label, values: a.data.map((r) => Number(r[m.value])), color: m.color }],
    [a, m],
  );
  const download = () =>
    downloadCsv(
      `${props.fileName}-by-day.csv`,
      toCsv(
        ['Day', ...measureColumns(a.currency)],
        a.data.map((r) => [r.key!.slice(0, 10), ...measureCells(r)]),
      ),
    );
  return (
    <>
      <DailyChart
        title={money ? `${m.label} (${a.currency}), ${a.timezone}` : `${m.label}, ${a.timezone}`}
        days={days}
        series={series}
        format={money ? (v) => formatMoney(v, a.currency) : undefined}
      />
      <button type="button" onClick={download}>
        Download the series (CSV)
      </button>
    </>
  );
}

/** Saves `csv` as the file `name` (a download the browser asks nothing for: the user pressed the button). */
export function downloadCsv(name: string, csv: string): void {
  const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
