import type { ComponentChildren } from 'preact';
import { useMemo } from 'preact/hooks';
import { api, dash, unwrap, type DashboardSchema, type Session } from '../api.ts';
import { DailyChart } from '../chart.tsx';
import { useLoad, type Loaded as LoadedState } from '../hooks.ts';
import { Empty, formatMoney, formatTime, Link, Loaded, Page } from '../ui.tsx';

/** How the programme did over the last 30 days, and what waits for the merchant. */
export function OverviewPage(props: { session: Session }) {
  const figures = useLoad(async () => unwrap(await dash.GET('/dashboard/api/overview')), []);
  const affiliates = useLoad(
    async () => unwrap(await api.GET('/api/v1/affiliates', { params: { query: { status: 'pending', limit: 10 } } })),
    [],
  );
  const commissions = useLoad(
    async () => unwrap(await api.GET('/api/v1/commissions', { params: { query: { status: 'pending', limit: 10 } } })),
    [],
  );
  return (
    <Page title="Overview">
      <p class="muted">Signed in as {props.session.user.email}.</p>
      <Loaded state={figures} what="the last 30 days">
        {(f) => <Charts figures={f} />}
      </Loaded>
      <div class="grid-2">
        <Pending
          id="pending-affiliates"
          title="Affiliates waiting for approval"
          state={affiliates}
          empty="No affiliate is waiting."
        >
          {(a: { id: string; display_name: string; email: string }) => (
            <>
              <Link to={`/affiliates/${a.id}`}>{a.display_name}</Link> <span class="muted">{a.email}</span>
            </>
          )}
        </Pending>
        <Pending
          id="pending-commissions"
          title="Commissions waiting for approval"
          state={commissions}
          empty="No commission is waiting."
        >
          {(c: { id: string; amount: number; currency: string; affiliate_id: string; created_at: string }) => (
            <>
              <Link to={`/commissions?affiliate_id=${c.affiliate_id}`}>{formatMoney(c.amount, c.currency)}</Link>{' '}
              <span class="muted">{formatTime(c.created_at)}</span>
            </>
          )}
        </Pending>
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

function Pending<T extends { id: string }>(props: {
  id: string;
  title: string;
  empty: string;
  state: LoadedState<{ data: T[] }>;
  children: (item: T) => ComponentChildren;
}) {
  return (
    <section aria-labelledby={props.id}>
      <h2 id={props.id}>{props.title}</h2>
      <Loaded state={props.state} what={props.title.toLowerCase()}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty>{props.empty}</Empty>
          ) : (
            <ul class="plain">
              {page.data.map((item) => (
                <li key={item.id}>{props.children(item)}</li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </section>
  );
}
