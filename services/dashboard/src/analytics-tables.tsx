import { api, unwrap, type Schemas } from './api.ts';
import { downloadCsv, loadAnalytics, measureCells, measureColumns, type Dimension } from './analytics.tsx';
import { toCsv } from './csv.ts';
import { useList, useLoad } from './hooks.ts';
import type { Span } from './range.ts';
import { Empty, formatMoney, formatTime, Link, Loaded, PagedTable, Table } from './ui.tsx';

/**
 * The tables the Analytics page and an affiliate's page share: the top values of each dimension over the range, and
 * the conversion events with their attribution. Each downloads as the CSV file of what it shows.
 */

type Row = Schemas['AnalyticsRow'];

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
 * The top tables over the range: every dimension's for the merchant, or for one affiliate all but the affiliates'
 * (it would be that affiliate alone). `fileName` starts each table's CSV file's name.
 */
export function TopTables(props: { span: Span; affiliateId?: string; fileName: string }) {
  const tops = props.affiliateId ? TOPS.filter((t) => t.dimension !== 'affiliate') : TOPS;
  return (
    <div class="grid-2">
      {tops.map((top) => (
        <TopTable
          key={top.dimension}
          span={props.span}
          affiliateId={props.affiliateId}
          fileName={props.fileName}
          {...top}
        />
      ))}
    </div>
  );
}

/** A row's value of the dimension in words: an affiliate's name, or "None" (unattributed, unknown). */
const keyText = (r: Row) => r.display_name ?? r.key ?? 'None';

function TopTable(props: {
  span: Span;
  affiliateId: string | undefined;
  fileName: string;
  dimension: Dimension;
  title: string;
  column: string;
}) {
  const { span, affiliateId, dimension } = props;
  const top = useLoad(
    () =>
      loadAnalytics(span, { group_by: dimension, limit: TOP, ...(affiliateId ? { affiliate_id: affiliateId } : {}) }),
    [span, affiliateId, dimension],
  );
  const id = `top-${dimension}`;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{props.title}</h2>
      <Loaded state={top} what={props.title.toLowerCase()}>
        {(a) => {
          const columns = [props.column, ...measureColumns(a.currency)];
          const download = () =>
            downloadCsv(
              `${props.fileName}-${dimension}.csv`,
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

type StoredEvent = Schemas['StoredConversionEvent'];

/** How an event was attributed, in words. */
const attributionText = (e: StoredEvent) =>
  e.attribution ? (e.attribution.method === 'cookie' ? 'Cookie' : 'Coupon') : 'Not attributed';

/** The events table's columns, as shown; its CSV splits the ones that join two values, and names the event. */
const EVENT_COLUMNS = ['Event', 'Amount', 'Affiliate', 'Attribution', 'Click', 'Coupon', 'Recorded'];
const EVENT_CSV_COLUMNS = [
  'Event id',
  'Event type',
  'External id',
  'Amount',
  'Currency',
  'Affiliate id',
  'Attribution',
  'Click',
  'Coupon',
  'Recorded',
];

/** An event's CSV cells: the amount as sent, the instant in ISO 8601 (UTC), none for what has none. */
const eventCells = (e: StoredEvent) => [
  e.id,
  e.event_type,
  e.external_id,
  e.amount,
  e.currency,
  e.affiliate_id,
  attributionText(e),
  e.attribution?.click_id ?? null,
  e.attribution?.coupon ?? null,
  e.created_at,
];

/**
 * The conversion events of the range (and one affiliate), newest first, paged, each with its attribution; the page
 * shown downloads as a CSV file (`fileName` starts its name).
 */
export function EventsSection(props: { span: Span; affiliateId?: string; fileName: string }) {
  const { span, affiliateId } = props;
  const events = useList(
    async (cursor) =>
      unwrap(
        await api.GET('/api/v1/events', {
          params: {
            query: {
              created_after: span.start,
              created_before: span.end,
              limit: 25,
              ...(affiliateId ? { affiliate_id: affiliateId } : {}),
              ...(cursor ? { cursor } : {}),
            },
          },
        }),
      ),
    [span, affiliateId],
  );
  const shown = events.loading ? [] : (events.data?.data ?? []);
  const download = () =>
    downloadCsv(
      `${props.fileName}-events${events.page > 1 ? `-page-${events.page}` : ''}.csv`,
      toCsv(EVENT_CSV_COLUMNS, shown.map(eventCells)),
    );
  return (
    <section aria-labelledby="events-heading">
      <h2 id="events-heading">Conversion events</h2>
      <PagedTable
        list={events}
        what="events"
        empty="No event in this range."
        columns={EVENT_COLUMNS}
        label="Events"
        row={(e) => (
          <tr key={e.id}>
            <td>
              {e.event_type} <code>{e.external_id}</code>
            </td>
            <td>{formatMoney(e.amount, e.currency)}</td>
            <td>{e.affiliate_id ? <Link to={`/affiliates/${e.affiliate_id}`}>{e.affiliate_id}</Link> : '—'}</td>
            <td>{attributionText(e)}</td>
            <td>{e.attribution?.click_id ? <code>{e.attribution.click_id}</code> : '—'}</td>
            <td>{e.attribution?.coupon ? <code>{e.attribution.coupon}</code> : '—'}</td>
            <td>{formatTime(e.created_at)}</td>
          </tr>
        )}
      />
      {shown.length > 0 && !events.error ? (
        <button type="button" onClick={download}>
          Download CSV
          <span class="visually-hidden"> of {events.page > 1 ? `page ${events.page} of ` : ''}the events</span>
        </button>
      ) : null}
    </section>
  );
}
