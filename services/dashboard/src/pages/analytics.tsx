import type { Schemas } from '../api.ts';
import {
  downloadCsv,
  EventsSection,
  loadAnalytics,
  measureCells,
  measureColumns,
  RangeControls,
  SeriesSection,
  useRange,
  type Dimension,
} from '../analytics.tsx';
import { toCsv } from '../csv.ts';
import type { Span } from '../range.ts';
import { useLoad } from '../hooks.ts';
import { Empty, formatMoney, Link, Loaded, Page, Table } from '../ui.tsx';

/** How many of each dimension's values the top tables show. */
const TOP = 10;

const TOPS: { dimension: Dimension; title: string; column: string }[] = [
  { dimension: 'affiliate', title: 'Top affiliates', column: 'Affiliate' },
  { dimension: 'coupon', title: 'Top coupons', column: 'Coupon' },
  { dimension: 'country', title: 'Top countries', column: 'Country' },
  { dimension: 'referrer', title: 'Top referrers', column: 'Referrer' },
  { dimension: 'landing_page', title: 'Top landing pages', column: 'Landing page' },
  { dimension: 'device', title: 'Devices', column: 'Device' },
];

/**
 * Clicks, conversions, revenue and commissions over a range: the series by day, the top values of each dimension,
 * and the conversion events with their attribution; each series and table downloads as the CSV of what it shows.
 */
export function AnalyticsPage() {
  const { range, span, set } = useRange();
  return (
    <Page title="Analytics">
      <RangeControls range={range} set={set} />
      <SeriesSection span={span} fileName="analytics" />
      <div class="grid-2">
        {TOPS.map((top) => (
          <TopTable key={top.dimension} span={span} {...top} />
        ))}
      </div>
      <EventsSection span={span} />
    </Page>
  );
}

type Row = Schemas['AnalyticsRow'];

/** A row's value of the dimension in words: an affiliate's name, or "None" (unattributed, unknown). */
const keyText = (r: Row) => r.display_name ?? r.key ?? 'None';

function TopTable(props: { span: Span; dimension: Dimension; title: string; column: string }) {
  const { span, dimension } = props;
  const top = useLoad(() => loadAnalytics(span, { group_by: dimension, limit: TOP }), [span, dimension]);
  const id = `top-${dimension}`;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{props.title}</h2>
      <Loaded state={top} what={props.title.toLowerCase()}>
        {(a) => {
          const columns = [props.column, ...measureColumns(a.currency)];
          const download = () =>
            downloadCsv(
              `analytics-${dimension}.csv`,
              toCsv(
                dimension === 'affiliate' ? ['Affiliate id', ...columns] : columns,
                a.data.map((r) => [...(dimension === 'affiliate' ? [r.key] : []), keyText(r), ...measureCells(r)]),
              ),
            );
          return a.data.length === 0 ? (
            <Empty>Nothing in this range.</Empty>
          ) : (
            <>
              <Table
                columns={columns}
                rows={a.data}
                row={(r) => (
                  <tr key={r.key ?? ''}>
                    <td>
                      {dimension === 'affiliate' && r.key ? (
                        <Link to={`/affiliates/${r.key}`}>{keyText(r)}</Link>
                      ) : (
                        keyText(r)
                      )}
                    </td>
                    <td>{r.clicks}</td>
                    <td>{r.conversions}</td>
                    <td>{formatMoney(Number(r.revenue), a.currency)}</td>
                    <td>{formatMoney(Number(r.commissions), a.currency)}</td>
                  </tr>
                )}
              />
              <button type="button" onClick={download}>
                Download CSV<span class="visually-hidden"> of {props.title.toLowerCase()}</span>
              </button>
            </>
          );
        }}
      </Loaded>
    </section>
  );
}
