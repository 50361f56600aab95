import { useState } from 'preact/hooks';
import { api, unwrap, type Schemas } from '../api.ts';
import { EVENT_TYPES as GENERATED_EVENT_TYPES } from '../generated/event-types.ts';
import { useAction, useLoad, usePager } from '../hooks.ts';
import { navigate } from '../router.ts';
import { Empty, ErrorText, Field, formatTime, Link, Loaded, Page, Pager, Status } from '../ui.tsx';

export type EventType = Schemas['WebhookEndpoint']['event_types'][number];
/** Generated from the platform's catalogue; typed by the API's schema, so the two cannot disagree unnoticed. */
export const EVENT_TYPES: readonly EventType[] = GENERATED_EVENT_TYPES;

/** Webhooks: the merchant's endpoints and a form to register one. */
export function WebhooksPage() {
  const pager = usePager();
  const endpoints = useLoad(
    async () =>
      unwrap(
        await api.GET('/api/v1/webhook_endpoints', {
          params: { query: { limit: 25, ...(pager.cursor ? { cursor: pager.cursor } : {}) } },
        }),
      ),
    [pager.cursor],
  );
  return (
    <Page title="Webhooks">
      <CreateEndpoint />
      <section aria-labelledby="endpoints-heading">
        <h2 id="endpoints-heading">Endpoints</h2>
        <Loaded state={endpoints} what="endpoints">
          {(page) =>
            page.data.length === 0 ? (
              <Empty>No endpoint yet: register one above to receive events.</Empty>
            ) : (
              <>
                <div class="table-wrap" tabIndex={0}>
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">URL</th>
                        <th scope="col">Events</th>
                        <th scope="col">State</th>
                        <th scope="col">Last success</th>
                      </tr>
                    </thead>
                    <tbody>
                      {page.data.map((e) => (
                        <tr key={e.id}>
                          <td>
                            <Link to={`/webhooks/${e.id}`}>{e.url}</Link>
                            {e.description ? <div class="muted">{e.description}</div> : null}
                          </td>
                          <td>
                            {e.event_types.length === EVENT_TYPES.length ? 'All events' : e.event_types.join(', ')}
                          </td>
                          <td>
                            <Status value={e.enabled ? 'enabled' : 'disabled'} />
                          </td>
                          <td>{formatTime(e.last_success_at)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
                <Pager
                  label="Endpoints"
                  page={pager.page}
                  next={page.next_cursor}
                  onNext={pager.next}
                  onPrevious={pager.previous}
                />
              </>
            )
          }
        </Loaded>
      </section>
    </Page>
  );
}

function CreateEndpoint() {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState<EventType[]>([]);
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = { url, ...(description ? { description } : {}), ...(types.length ? { event_types: types } : {}) };
    const created = await action.run(async () => unwrap(await api.POST('/api/v1/webhook_endpoints', { body })));
    // The secret is not shown here: the endpoint's page reveals it after the password, whenever it is needed.
    if (created) navigate(`/webhooks/${created.id}`);
  };
  return (
    <section aria-labelledby="create-endpoint">
      <h2 id="create-endpoint">Register an endpoint</h2>
      <form onSubmit={(e) => void submit(e)}>
        <div class="inline-form">
          <Field label="Endpoint URL">
            <input
              type="url"
              required
              size={40}
              value={url}
              onInput={(e) => setUrl(e.currentTarget.value)}
              placeholder="https://hooks.example.com/affiliates"
            />
          </Field>
          <Field label="Description (optional)">
            <input
              type="text"
              maxLength={500}
              value={description}
              onInput={(e) => setDescription(e.currentTarget.value)}
            />
          </Field>
        </div>
        <EventTypePicker legend="Events to send (none ticked: all twelve)" value={types} onChange={setTypes} />
        <button type="submit" class="primary" disabled={action.busy}>
          Register endpoint
        </button>
        <ErrorText error={action.error} />
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
