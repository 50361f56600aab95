import { useEffect, useState } from 'preact/hooks';
import { api, dash, unwrap, type Schemas } from '../api.ts';
import { useAction, useForm, useLoad } from '../hooks.ts';
import { Empty, ErrorText, Field, formatTime, Loaded, Status, Table } from '../ui.tsx';

type Delivery = Schemas['WebhookDelivery'];

/** The delivery log (the last 100, each with its attempts), replay of one, and bulk replay between two times. */
export function Deliveries(props: { endpointId: string; refresh: number }) {
  const [round, setRound] = useState(0);
  const log = useLoad(
    async () =>
      unwrap(
        await api.GET('/api/v1/webhook_endpoints/{endpoint_id}/deliveries', {
          params: { path: { endpoint_id: props.endpointId }, query: { limit: 100 } },
        }),
      ),
    [props.endpointId, props.refresh, round],
  );
  const refresh = () => setRound((r) => r + 1);
  return (
    <section aria-labelledby="log-heading">
      <h2 id="log-heading">Delivery log</h2>
      <button type="button" onClick={refresh}>
        Refresh log
      </button>
      <BulkReplay endpointId={props.endpointId} onReplayed={refresh} />
      <Loaded state={log} what="deliveries">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No delivery yet.</Empty>
          ) : (
            <ol class="deliveries">
              {page.data.map((d) => (
                <DeliveryItem key={d.id} delivery={d} onReplayed={refresh} />
              ))}
            </ol>
          )
        }
      </Loaded>
    </section>
  );
}

function DeliveryItem(props: { delivery: Delivery; onReplayed: () => void }) {
  const d = props.delivery;
  const action = useAction();
  const [replayed, setReplayed] = useState(false);
  const replay = async () => {
    const res = await action.run(async () =>
      unwrap(
        await api.POST('/api/v1/webhook_deliveries/{delivery_id}/replay', { params: { path: { delivery_id: d.id } } }),
      ),
    );
    if (res) {
      setReplayed(true);
      props.onReplayed();
    }
  };
  return (
    <li class="delivery" data-delivery={d.id}>
      <div class="delivery-head">
        <strong>{d.event_type}</strong> <Status value={d.status} />
        <span class="muted">
          {formatTime(d.created_at)} · <code>{d.message_id}</code>
        </span>
        {d.dead_letter_reason ? <span class="muted">reason: {d.dead_letter_reason.replace('_', ' ')}</span> : null}
        {d.status === 'dead_lettered' || d.status === 'succeeded' ? (
          <button
            type="button"
            disabled={action.busy || replayed}
            onClick={() => void replay()}
            aria-label={`Replay delivery ${d.id}`}
          >
            {replayed ? 'Replay scheduled' : 'Replay'}
          </button>
        ) : null}
      </div>
      <ErrorText error={action.error} />
      {d.attempts.length === 0 ? (
        <p class="muted">No attempt yet{d.next_attempt_at ? `; next ${formatTime(d.next_attempt_at)}` : ''}.</p>
      ) : (
        <Table
          caption={`Attempts of delivery ${d.id}`}
          columns={['Time', 'Result', 'Duration', 'Response']}
          rows={d.attempts}
          row={(a) => (
            <tr key={a.attempted_at}>
              <td>{formatTime(a.attempted_at)}</td>
              <td>{a.status_code !== null ? `HTTP ${a.status_code}` : (a.error ?? 'no response')}</td>
              <td>{a.duration_ms} ms</td>
              <td>
                <code class="excerpt">{a.response_body.slice(0, 200)}</code>
              </td>
            </tr>
          )}
        />
      )}
    </li>
  );
}

/** `datetime-local` values are the browser's local time; the API takes UTC instants. */
const toIso = (local: string) => new Date(local).toISOString();
const localInput = (date: Date) =>
  new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

function BulkReplay(props: { endpointId: string; onReplayed: () => void }) {
  const [count, setCount] = useState<number>();
  const [done, setDone] = useState<string>();
  const action = useAction();
  const path = { endpoint_id: props.endpointId };
  const form = useForm(
    { since: localInput(new Date(Date.now() - 24 * 3600_000)), until: localInput(new Date(Date.now() + 60_000)) },
    async (v) => {
      setDone(undefined);
      return unwrap(
        await dash.GET('/dashboard/api/webhook_endpoints/{endpoint_id}/replay_count', {
          params: { path, query: { since: toIso(v.since), until: toIso(v.until) } },
        }),
      );
    },
    (res) => setCount(res.count),
    { keep: true },
  );
  const { since, until } = form.values;
  useEffect(() => setCount(undefined), [since, until]);
  const confirm = async () => {
    const res = await action.run(async () =>
      unwrap(
        await api.POST('/api/v1/webhook_endpoints/{endpoint_id}/replay', {
          params: { path },
          body: { since: toIso(since), until: toIso(until) },
        }),
      ),
    );
    setCount(undefined);
    if (res) {
      setDone(`${res.replayed} ${res.replayed === 1 ? 'delivery' : 'deliveries'} scheduled again.`);
      props.onReplayed();
    }
  };
  return (
    <form class="inline-form bulk" onSubmit={form.onSubmit} aria-label="Bulk replay">
      <Field label="Dead-lettered from" error={form.fieldError('since')}>
        <input type="datetime-local" required {...form.bind('since')} />
      </Field>
      <Field label="until" error={form.fieldError('until')}>
        <input type="datetime-local" required {...form.bind('until')} />
      </Field>
      <button type="submit" disabled={form.pending || action.busy}>
        Count deliveries to replay
      </button>
      {count !== undefined ? (
        <span class="confirm" role="status">
          {count === 0 ? (
            'No dead-lettered delivery in that range.'
          ) : (
            <>
              {count} dead-lettered {count === 1 ? 'delivery' : 'deliveries'} in that range.
              <button type="button" class="primary" disabled={action.busy} onClick={() => void confirm()}>
                Replay {count}
              </button>
              <button type="button" onClick={() => setCount(undefined)}>
                Cancel
              </button>
            </>
          )}
        </span>
      ) : null}
      {done ? <span role="status">{done}</span> : null}
      <ErrorText error={action.error ?? form.error} />
    </form>
  );
}
