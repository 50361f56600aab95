import { api, unwrap, type Session } from '../api.ts';
import { useLoad } from '../hooks.ts';
import { Empty, formatMoney, formatTime, Link, Loaded, Page } from '../ui.tsx';

/** What needs attention and how the programme is doing. */
export function OverviewPage(props: { session: Session }) {
  const affiliates = useLoad(async () => unwrap(await api.GET('/api/v1/affiliates', { params: { query: { status: 'pending', limit: 10 } } })), []);
  const commissions = useLoad(async () => unwrap(await api.GET('/api/v1/commissions', { params: { query: { status: 'pending', limit: 10 } } })), []);
  return (
    <Page title="Overview">
      <p class="muted">Welcome, {props.session.user.email}.</p>
      <div class="grid-2">
        <section aria-labelledby="pending-affiliates">
          <h2 id="pending-affiliates">Affiliates waiting for approval</h2>
          <Loaded state={affiliates} what="pending affiliates">
            {(page) =>
              page.data.length === 0 ? (
                <Empty>No affiliate is waiting.</Empty>
              ) : (
                <ul class="plain">
                  {page.data.map((a) => (
                    <li key={a.id}>
                      <Link to={`/affiliates/${a.id}`}>{a.display_name}</Link> <span class="muted">{a.email}</span>
                    </li>
                  ))}
                </ul>
              )
            }
          </Loaded>
        </section>
        <section aria-labelledby="pending-commissions">
          <h2 id="pending-commissions">Commissions waiting for approval</h2>
          <Loaded state={commissions} what="pending commissions">
            {(page) =>
              page.data.length === 0 ? (
                <Empty>No commission is waiting.</Empty>
              ) : (
                <ul class="plain">
                  {page.data.map((c) => (
                    <li key={c.id}>
                      <Link to={`/commissions?affiliate_id=${c.affiliate_id}`}>{formatMoney(c.amount, c.currency)}</Link>{' '}
                      <span class="muted">{formatTime(c.created_at)}</span>
                    </li>
                  ))}
                </ul>
              )
            }
          </Loaded>
        </section>
      </div>
    </Page>
  );
}
