import { useMemo } from 'preact/hooks';
import { api, dash, unwrap, type DashboardSchema, type Session } from '../api.ts';
import { DailyChart } from '../chart.tsx';
import { AffiliateCells } from './affiliates.tsx';
import { useList, useLoad } from '../hooks.ts';
import { Empty, formatMoney, formatTime, Link, Loaded, Page, PagedTable } from '../ui.tsx';

/** How the programme did over the last 30 days, and what waits for the merchant. */
export function OverviewPage(props: { session: Session }) {
  const figures = useLoad(async () => unwrap(await dash.GET('/dashboard/api/overview')), []);
  const query = (cursor: string | undefined) => ({
    params: { query: { status: 'pending' as const, limit: 10, ...(cursor ? { cursor } : {}) } },
  });
  const affiliates = useList(async (cursor) => unwrap(await api.GET('/api/v1/affiliates', query(cursor))));
  const commissions = useList(async (cursor) => unwrap(await api.GET('/api/v1/commissions', query(cursor))));
  return (
    <Page title="Overview">
      <p class="muted">Signed in as {props.session.user.email}.</p>
      <Loaded state={figures} what="the last 30 days">
        {(f) => <Charts figures={f} />}
      </Loaded>
      <div class="grid-2">
        <section aria-labelledby="pending-affiliates">
          <h2 id="pending-affiliates">Affiliates waiting for approval</h2>
          <PagedTable
            list={affiliates}
            what="affiliates waiting for approval"
            empty="No affiliate is waiting."
            columns={['Name', 'E-mail']}
            label="Affiliates waiting"
            row={(a) => (
              <tr key={a.id}>
                <AffiliateCells affiliate={a} />
              </tr>
            )}
          />
        </section>
        <section aria-labelledby="pending-commissions">
          <h2 id="pending-commissions">Commissions waiting for approval</h2>
          <PagedTable
            list={commissions}
            what="commissions waiting for approval"
            empty="No commission is waiting."
            columns={['Amount', 'Created']}
            label="Commissions waiting"
            row={(c) => (
              <tr key={c.id}>
                <td>
                  <Link to={`/commissions?affiliate_id=${c.affiliate_id}`}>{formatMoney(c.amount, c.currency)}</Link>
                </td>
                <td>{formatTime(c.created_at)}</td>
              </tr>
            )}
          />
        </section>
      </div>
    </Page>
  );
}

function Charts(props: { figures: DashboardSchema['DashboardOverview'] }) {
  const f = props.figures;
  const money = (v: number) => formatMoney(v, f.currency);
  const conversions = useMemo(() => [{ label: 'Conversions', values: f.conversions, color: '#1d4ed8' }], [f]);
  const amounts = useMemo(
    () => [
      { label: 'Revenue attributed', values: f.revenue, color: '#047857' },
      { label: 'Commissions', values: f.commissions, color: '#b45309' },
    ],
    [f],
  );
  return (
    <>
      <div class="grid-2">
        <DailyChart title="Conversions, last 30 days" days={f.days} series={conversions} />
        <DailyChart
          title={`Revenue attributed and commissions (${f.currency}), last 30 days`}
          days={f.days}
          series={amounts}
          format={money}
        />
      </div>
      <section aria-labelledby="top-heading">
        <h2 id="top-heading">Top affiliates</h2>
        {f.top_affiliates.length === 0 ? (
          <Empty>No attributed revenue yet.</Empty>
        ) : (
          <ol class="plain">
            {f.top_affiliates.map((a) => (
              <li key={a.id}>
                <Link to={`/affiliates/${a.id}`}>{a.display_name}</Link> {money(a.attributed_revenue)}{' '}
                <span class="muted">from {a.conversions} conversions</span>
              </li>
            ))}
          </ol>
        )}
      </section>
    </>
  );
}
