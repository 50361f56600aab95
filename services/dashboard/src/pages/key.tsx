import { useMemo } from 'preact/hooks';
import { dash, unwrap, type Session } from '../api.ts';
import { DailyChart } from '../chart.tsx';
import { useForm, useLoad } from '../hooks.ts';
import { Empty, ErrorText, Field, formatTime, Link, Loaded, Page, Table } from '../ui.tsx';

const ACTIONS: Record<string, string> = {
  created: 'Created',
  revoked: 'Revoked',
  scopes_changed: 'Access changed',
  rate_limit_changed: 'Rate limit changed',
};

/** One key: its audit log with the acting user, its daily requests, and (scale and up) its rate limit. */
export function KeyPage(props: { keyId: string; session: Session }) {
  const audit = useLoad(
    async () =>
      unwrap(await dash.GET('/dashboard/api/keys/{key_id}/audit', { params: { path: { key_id: props.keyId } } })),
    [props.keyId],
  );
  return (
    <Page title="API key" actions={<Link to="/settings/keys">All keys</Link>}>
      <Loaded state={audit} what="the key">
        {(a) => (
          <>
            <dl class="facts">
              <dt>Prefix</dt>
              <dd>
                <code>{a.key.prefix}…</code>
              </dd>
              <dt>Scopes</dt>
              <dd>{a.key.scopes.join(', ')}</dd>
              <dt>Rate limit</dt>
              <dd>{a.key.rate_limit_per_min} requests per minute</dd>
              <dt>State</dt>
              <dd>{a.key.revoked_at ? `Revoked ${formatTime(a.key.revoked_at)}` : 'Active'}</dd>
            </dl>
            {['scale', 'enterprise'].includes(props.session.merchant.plan) && !a.key.revoked_at ? (
              <RateLimit keyId={props.keyId} current={a.key.rate_limit_per_min} onChanged={audit.reload} />
            ) : null}
            <Usage days={a.usage.map((u) => u.day)} requests={a.usage.map((u) => u.requests)} />
            <section aria-labelledby="audit-heading">
              <h2 id="audit-heading">Audit log</h2>
              {a.events.length === 0 ? (
                <Empty>Nothing recorded.</Empty>
              ) : (
                <Table
                  columns={['When', 'What', 'Who', 'Detail']}
                  rows={a.events.map((e, i) => ({ ...e, n: i }))}
                  row={(e) => (
                    <tr key={e.n}>
                      <td>{formatTime(e.at)}</td>
                      <td>{ACTIONS[e.action] ?? e.action}</td>
                      <td>{e.actor ?? '—'}</td>
                      <td>
                        <code>{Object.keys(e.detail).length ? JSON.stringify(e.detail) : ''}</code>
                      </td>
                    </tr>
                  )}
                />
              )}
            </section>
          </>
        )}
      </Loaded>
    </Page>
  );
}

function Usage(props: { days: string[]; requests: number[] }) {
  const series = useMemo(() => [{ label: 'Requests', values: props.requests, color: '#2563eb' }], [props.requests]);
  return <DailyChart title="Requests per day, last 30 days" days={props.days} series={series} />;
}

function RateLimit(props: { keyId: string; current: number; onChanged: () => void }) {
  const form = useForm(
    { rate_limit_per_min: String(props.current) },
    async (v) =>
      unwrap(
        await dash.PATCH('/dashboard/api/keys/{key_id}', {
          params: { path: { key_id: props.keyId } },
          body: { rate_limit_per_min: Number(v.rate_limit_per_min) },
        }),
      ),
    props.onChanged,
    { keep: true },
  );
  return (
    <form class="inline-form" onSubmit={form.onSubmit}>
      <Field label="Requests per minute" hint="60 to 60,000" error={form.fieldError('rate_limit_per_min')}>
        <input type="number" min={60} max={60000} required {...form.bind('rate_limit_per_min')} />
      </Field>
      <button type="submit" disabled={form.pending}>
        Save rate limit
      </button>
      <ErrorText error={form.error} />
    </form>
  );
}
