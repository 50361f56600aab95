import { useState } from 'preact/hooks';
import { api, unwrap, type Schemas } from '../api.ts';
import { EVENT_TYPES as GENERATED_EVENT_TYPES } from '../generated/event-types.ts';
import { useForm, useList } from '../hooks.ts';
import { navigate } from '../router.ts';
import { ErrorText, Field, formatTime, Link, Page, PagedTable, Status } from '../ui.tsx';

export type EventType = Schemas['WebhookEndpoint']['event_types'][number];
/** Generated from the platform's catalogue; typed by the API's schema, so the two cannot disagree unnoticed. */
export const EVENT_TYPES: readonly EventType[] = GENERATED_EVENT_TYPES;

/** Webhooks: the merchant's endpoints and a form to register one. */
export function WebhooksPage() {
  const endpoints = useList(async (cursor) =>
    unwrap(
      await api.GET('/api/v1/webhook_endpoints', { params: { query: { limit: 25, ...(cursor ? { cursor } : {}) } } }),
    ),
  );
  return (
    <Page title="Webhooks">
      <CreateEndpoint />
      <section aria-labelledby="endpoints-heading">
        <h2 id="endpoints-heading">Endpoints</h2>
        <PagedTable
          list={endpoints}
          what="endpoints"
          empty="No endpoint yet: register one above to receive events."
          columns={['URL', 'Events', 'State', 'Last success']}
          label="Endpoints"
          row={(e) => (
            <tr key={e.id}>
              <td>
                <Link to={`/webhooks/${e.id}`}>{e.url}</Link>
                {e.description ? <div class="muted">{e.description}</div> : null}
              </td>
              <td>{e.event_types.length === EVENT_TYPES.length ? 'All events' : e.event_types.join(', ')}</td>
              <td>
                <Status value={e.enabled ? 'enabled' : 'disabled'} />
              </td>
              <td>{formatTime(e.last_success_at)}</td>
            </tr>
          )}
        />
      </section>
    </Page>
  );
}

function CreateEndpoint() {
  const [types, setTypes] = useState<EventType[]>([]);
  const form = useForm(
    { url: '', description: '' },
    async (v) =>
      unwrap(
        await api.POST('/api/v1/webhook_endpoints', {
          body: {
            url: v.url,
            ...(v.description ? { description: v.description } : {}),
            ...(types.length ? { event_types: types } : {}),
          },
        }),
      ),
    // The secret is not shown here: the endpoint's page reveals it after the password, whenever it is needed.
    (created) => navigate(`/webhooks/${created.id}`),
  );
  return (
    <section aria-labelledby="create-endpoint">
      <h2 id="create-endpoint">Register an endpoint</h2>
      <form onSubmit={form.onSubmit}>
        <div class="inline-form">
          <Field label="Endpoint URL" error={form.fieldError('url')}>
            <input
              type="url"
              required
              size={40}
              {...form.bind('url')}
              placeholder="https://hooks.example.com/affiliates"
            />
          </Field>
          <Field label="Description (optional)" error={form.fieldError('description')}>
            <input type="text" maxLength={500} {...form.bind('description')} />
          </Field>
        </div>
        <EventTypePicker legend="Events to send (none ticked: all twelve)" value={types} onChange={setTypes} />
        <button type="submit" class="primary" disabled={form.pending}>
          Register endpoint
        </button>
        <ErrorText error={form.error} />
      </form>
    </section>
  );
}

export function EventTypePicker(props: { legend: string; value: EventType[]; onChange: (v: EventType[]) => void }) {
  const toggle = (t: EventType, on: boolean) =>
    props.onChange(on ? [...props.value, t] : props.value.filter((v) => v !== t));
  return (
    <fieldset class="event-types">
      <legend>{props.legend}</legend>
      {EVENT_TYPES.map((t) => (
        <label key={t} class="choice">
          <input
            type="checkbox"
            checked={props.value.includes(t)}
            onChange={(e) => toggle(t, e.currentTarget.checked)}
          />
          {t}
        </label>
      ))}
    </fieldset>
  );
}
