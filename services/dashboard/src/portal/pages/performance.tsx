import { useMemo, useState } from 'preact/hooks';
import { MeasurePicker, useRange } from '../../analytics.tsx';
import { DailyChart } from '../../chart.tsx';
import { useLoad } from '../../hooks.ts';
import type { Preset } from '../../range.ts';
import { Field, Loaded, Page } from '../../ui.tsx';
import { portal, type Performance, type PortalSession } from '../api.ts';
import { money } from '../money.ts';

const PRESETS: { value: Preset; label: string }[] = [
  { value: '7', label: 'Last 7 days' },
  { value: '30', label: 'Last 30 days' },
  { value: '90', label: 'Last 90 days' },
];

type Measure = 'clicks' | 'conversions' | 'commissions';
const MEASURES: { value: Measure; label: string; color: string }[] = [
  { value: 'clicks', label: 'Clicks', color: '#1d4ed8' },
  { value: 'conversions', label: 'Conversions', color: '#6d28d9' },
  // An affiliate's earnings are the commissions the analytics count for it.
  { value: 'commissions', label: 'Earnings', color: '#b45309' },
];

/**
 * Clicks, conversions and earnings by day over the last 7, 30 or 90 days of the browser's time zone (the analytics
 * engine restricted to this affiliate, in the programme currency): one measure at a time as a chart, with its total.
 */
export function PerformancePage(props: { session: PortalSession }) {
  const { range, span, set } = useRange();
  const [measure, setMeasure] = useState<Measure>('clicks');
  const series = useLoad(() => {
    const query = new URLSearchParams({ group_by: 'day', start: span.start, end: span.end, timezone: span.timezone });
    return portal<Performance>('GET', `/performance?${query}`);
  }, [span, props.session.affiliate.id]);
  return (
    <Page title="Performance">
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
      </form>
      <MeasurePicker measures={MEASURES} value={measure} onChange={setMeasure} />
      <Loaded state={series} what="your performance">
        {(p) => <Series performance={p} measure={measure} />}
      </Loaded>
    </Page>
  );
}

function Series(props: { performance: Performance; measure: Measure }) {
  const p = props.performance;
  const m = MEASURES.find((x) => x.value === props.measure)!;
  const isMoney = m.value === 'commissions';
  // A bucket's key is its start as wall-clock time in the zone: its first ten characters are the local day.
  const days = useMemo(() => p.data.map((r) => r.key.slice(0, 10)), [p]);
  const series = useMemo(
    () => [{ label: m.label, values: p.data.map((r) => Number(r[m.value])), color: m.color }],
    [p, m],
  );
  const total = series[0]!.values.reduce((a, b) => a + b, 0);
  return (
    <>
      <p data-testid="performance-total">
        {m.label} in this range: <strong>{isMoney ? money(total, p.currency) : total}</strong>
      </p>
      <DailyChart
        title={isMoney ? `${m.label} (${p.currency}), ${p.timezone}` : `${m.label}, ${p.timezone}`}
        days={days}
        series={series}
        format={isMoney ? (v) => money(v, p.currency) : undefined}
      />
    </>
  );
}
