import { useState } from 'preact/hooks';
import { api, dash, unwrap, type Schemas } from '../api.ts';
import { useAction, useForm, useLoad } from '../hooks.ts';
import { navigate } from '../router.ts';
import { ErrorText, Field, formatTime, Link, Loaded, Page, Status } from '../ui.tsx';
import { Deliveries } from './deliveries.tsx';
import { EVENT_TYPES, EventTypePicker, type EventType } from './webhooks.tsx';

type Endpoint = Schemas['WebhookEndpoint'];

/** One endpoint: its settings, its secret, a test event, and its delivery log with replay. */
export function WebhookPage(props: { endpointId: string }) {
  const endpoint = useLoad(
    async () =>
      unwrap(
        await api.GET('/api/v1/webhook_endpoints/{endpoint_id}', {
          params: { path: { endpoint_id: props.endpointId } },
        }),
      ),
    [props.endpointId],
  );
  const [round, setRound] = useState(0);
  return (
    <Page title="Webhook endpoint" actions={<Link to="/webhooks">All endpoints</Link>}>
      <Loaded state={endpoint} what="the endpoint">
        {(e) => (
          <>
            <dl class="facts">
              <dt>URL</dt>
              <dd>{e.url}</dd>
              <dt>State</dt>
              <dd>
                <Status value={e.enabled ? 'enabled' : 'disabled'} />
                {e.disabled_reason ? ` (${e.disabled_reason.replace('_', ' ')})` : ''}
              </dd>
              <dt>Consecutive failures</dt>
              <dd>
                {e.consecutive_failures} of {e.failure_threshold} before it is disabled
              </dd>
              <dt>Last success</dt>
              <dd>{formatTime(e.last_success_at)}</dd>
            </dl>
            <EditEndpoint endpoint={e} onSaved={endpoint.reload} />
            <Secret endpointId={e.id} />
            <TestEvent endpointId={e.id} types={e.event_types} onSent={() => setRound((r) => r + 1)} />
          </>
        )}
      </Loaded>
      {/* Loaded beside the endpoint, not after it: the log does not wait for the endpoint's round trip. */}
      {endpoint.error ? null : <Deliveries endpointId={props.endpointId} refresh={round} />}
    </Page>
  );
}

function EditEndpoint(props: { endpoint: Endpoint; onSaved: () => void }) {
  const e = props.endpoint;
  const [types, setTypes] = useState<EventType[]>(e.event_types);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const action = useAction();
  const path = { params: { path: { endpoint_id: e.id } } };
  const patch = async (body: Schemas['UpdateWebhookEndpoint']) =>
    unwrap(await api.PATCH('/api/v1/webhook_endpoints/{endpoint_id}', { ...path, body }));
  const form = useForm(
    { failure_threshold: String(e.failure_threshold), description: e.description },
    (v) =>
      patch({
        event_types: types.length ? types : [...EVENT_TYPES],
        failure_threshold: Number(v.failure_threshold),
        description: v.description,
      }),
    props.onSaved,
    { keep: true },
  );
  const toggle = async () => {
    if (await action.run(() => patch({ enabled: !e.enabled }))) props.onSaved();
  };
  const remove = async () => {
    const res = await action.run(async () => unwrap(await api.DELETE('/api/v1/webhook_endpoints/{endpoint_id}', path)));
    if (res !== undefined) navigate('/webhooks');
  };
  return (
    <section aria-labelledby="endpoint-settings">
      <h2 id="endpoint-settings">Settings</h2>
      <form onSubmit={form.onSubmit}>
        <EventTypePicker legend="Events sent to this endpoint" value={types} onChange={setTypes} />
        <div class="inline-form">
          <Field
            label="Failure threshold"
            hint="consecutive failed attempts before it is disabled (1–100)"
            error={form.fieldError('failure_threshold')}
          >
            <input type="number" min={1} max={100} required {...form.bind('failure_threshold')} />
          </Field>
          <Field label="Description" error={form.fieldError('description')}>
            <input type="text" maxLength={500} {...form.bind('description')} />
          </Field>
          <button type="submit" class="primary" disabled={form.pending}>
            Save settings
          </button>
          <button type="button" disabled={action.busy} onClick={() => void toggle()}>
            {e.enabled ? 'Disable endpoint' : 'Enable endpoint'}
          </button>
          {confirmDelete ? (
            <span class="confirm" role="group" aria-label="Delete this endpoint?">
              <button type="button" class="danger" onClick={() => void remove()}>
                Confirm delete
              </button>
              <button type="button" onClick={() => setConfirmDelete(false)}>
                Cancel
              </button>
            </span>
          ) : (
            <button type="button" class="danger" onClick={() => setConfirmDelete(true)}>
              Delete endpoint
            </button>
          )}
        </div>
      </form>
      <ErrorText error={action.error ?? form.error} />
    </section>
  );
}

/** The signing secret: revealed after the password is entered again, or rotated (the old one signs for 24 h more). */
function Secret(props: { endpointId: string }) {
  const [secret, setSecret] = useState<string>();
  const [rotated, setRotated] = useState(false);
  const action = useAction();
  const reveal = useForm(
    { password: '' },
    async (v) =>
      unwrap(
        await dash.POST('/dashboard/api/webhook_endpoints/{endpoint_id}/reveal_secret', {
          params: { path: { endpoint_id: props.endpointId } },
          body: { password: v.password },
        }),
      ),
    (res) => setSecret(res.secret),
  );
  const rotate = async () => {
    const res = await action.run(async () =>
      unwrap(
        await api.POST('/api/v1/webhook_endpoints/{endpoint_id}/rotate_secret', {
          params: { path: { endpoint_id: props.endpointId } },
        }),
      ),
    );
    if (res) {
      setSecret(res.secret);
      setRotated(true);
    }
  };
  return (
    <section aria-labelledby="secret-heading">
      <h2 id="secret-heading">Signing secret</h2>
      {secret ? (
        <div class="once" role="status">
          <p>{rotated ? 'The new secret (the previous one keeps signing for 24 hours):' : 'The current secret:'}</p>
          <code class="secret" data-testid="webhook-secret">
            {secret}
          </code>
          <button type="button" onClick={() => setSecret(undefined)}>
            Hide
          </button>
        </div>
      ) : (
        <form class="inline-form" onSubmit={reveal.onSubmit}>
          <Field label="Your password" error={reveal.fieldError('password')}>
            <input type="password" autoComplete="current-password" required {...reveal.bind('password')} />
          </Field>
          <button type="submit" disabled={reveal.pending}>
            Reveal secret
          </button>
        </form>
      )}
      <button type="button" disabled={action.busy} onClick={() => void rotate()}>
        Rotate secret
      </button>
      <ErrorText error={action.error ?? reveal.error} />
    </section>
  );
}

function TestEvent(props: { endpointId: string; types: EventType[]; onSent: () => void }) {
  const [sent, setSent] = useState<string>();
  const form = useForm(
    { event_type: props.types[0] ?? 'affiliate.created' },
    async (v) => {
      const body = { event_type: v.event_type };
      const res = unwrap(
        await api.POST('/api/v1/webhook_endpoints/{endpoint_id}/test', {
          params: { path: { endpoint_id: props.endpointId } },
          body,
        }),
      );
      return `A sample ${body.event_type} event is on its way (delivery ${res.id}).`;
    },
    (text) => {
      setSent(text);
      props.onSent();
    },
    { keep: true },
  );
  return (
    <section aria-labelledby="test-heading">
      <h2 id="test-heading">Send a test event</h2>
      <form class="inline-form" onSubmit={form.onSubmit}>
        <Field label="Event type" error={form.fieldError('event_type')}>
          <select {...form.bind('event_type')}>
            {EVENT_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit" disabled={form.pending}>
          Send test event
        </button>
      </form>
      {sent ? <p role="status">{sent}</p> : null}
      <ErrorText error={form.error} />
    </section>
  );
}
