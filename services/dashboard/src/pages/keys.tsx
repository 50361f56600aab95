import { useState } from 'preact/hooks';
import { dash, unwrap, type DashboardSchema, type Session } from '../api.ts';
import { useAction, useForm, useList, type List } from '../hooks.ts';
import { Confirmed, ErrorText, Field, formatTime, Link, Loaded, Page, PagedTable } from '../ui.tsx';

type Scope = 'read' | 'write' | '*';
/** The scope presets (as docs and CLI name them), and write-only for server-side event ingestion. */
const PRESETS: { id: string; label: string; scopes: Scope[] }[] = [
  { id: 'read', label: 'Read-only', scopes: ['read'] },
  { id: 'read-write', label: 'Read & write', scopes: ['read', 'write'] },
  { id: 'full', label: 'Full access', scopes: ['*'] },
  { id: 'write', label: 'Write-only (event ingestion)', scopes: ['write'] },
];

/** The keys, and the form to create one for a role with the `keys` permission (the gateway refuses the others). */
export function KeysPage(props: { session: Session }) {
  const keys = useList(async () => unwrap(await dash.GET('/dashboard/api/keys')));
  const mayCreate = props.session.user.permissions.includes('keys');
  return (
    <Page title="API keys">
      <Loaded state={keys} what="API keys">
        {(list) => (
          <>
            {!mayCreate ? (
              <p class="notice">
                Your role ({props.session.user.role}) reads the keys; an owner, admin or developer creates them.
              </p>
            ) : list.can_create ? (
              <CreateKey canSetRateLimit={list.can_set_rate_limit} onCreated={keys.reload} />
            ) : (
              <p class="notice">
                API keys need the Growth plan or higher: <Link to="/settings/plan">upgrade</Link>. Your dashboard,
                webhooks and everything else here work on every plan.
              </p>
            )}
            <KeyTable keys={keys} manages={mayCreate} />
          </>
        )}
      </Loaded>
    </Page>
  );
}

function CreateKey(props: { canSetRateLimit: boolean; onCreated: () => void }) {
  const [created, setCreated] = useState<DashboardSchema['DashboardCreatedApiKey']>();
  const [copied, setCopied] = useState(false);
  const form = useForm(
    { preset: 'read', rate_limit_per_min: '' },
    async (v) => {
      const scopes = PRESETS.find((p) => p.id === v.preset)!.scopes;
      const body = v.rate_limit_per_min ? { scopes, rate_limit_per_min: Number(v.rate_limit_per_min) } : { scopes };
      return unwrap(await dash.POST('/dashboard/api/keys', { body }));
    },
    (key) => {
      setCreated(key);
      setCopied(false);
      props.onCreated();
    },
  );
  return (
    <section aria-labelledby="create-key">
      <h2 id="create-key">Create a key</h2>
      <form class="inline-form" onSubmit={form.onSubmit}>
        <fieldset>
          <legend>Access</legend>
          {PRESETS.map((p) => (
            <label key={p.id} class="choice">
              <input
                type="radio"
                name="preset"
                value={p.id}
                checked={form.values.preset === p.id}
                onChange={() => form.set('preset', p.id)}
              />
              {p.label}
            </label>
          ))}
        </fieldset>
        {props.canSetRateLimit ? (
          <Field
            label="Requests per minute"
            hint="60 to 60,000; 600 when empty"
            error={form.fieldError('rate_limit_per_min')}
          >
            <input type="number" min={60} max={60000} {...form.bind('rate_limit_per_min')} />
          </Field>
        ) : null}
        <button type="submit" class="primary" disabled={form.pending}>
          Create key
        </button>
      </form>
      <ErrorText error={form.error} />
      {created ? (
        <div class="once" role="status">
          <p>
            <strong>Copy this key now: it will not be shown again.</strong>
          </p>
          <code class="secret" data-testid="new-key">
            {created.key}
          </code>
          <button
            type="button"
            onClick={() =>
              void navigator.clipboard?.writeText(created.key).then(
                () => setCopied(true),
                () => setCopied(false),
              )
            }
          >
            {copied ? 'Copied' : 'Copy key'}
          </button>
          <button type="button" class="link-button" onClick={() => setCreated(undefined)}>
            Done
          </button>
        </div>
      ) : null}
    </section>
  );
}

const scopeLabel = (scopes: string[]) =>
  PRESETS.find((p) => p.scopes.join() === scopes.join())?.label ?? scopes.join(', ');

function KeyTable(props: { keys: List<DashboardSchema['DashboardApiKeyList']>; manages: boolean }) {
  const action = useAction();
  const revoke = async (id: string) => {
    const done = await action.run(async () =>
      unwrap(await dash.POST('/dashboard/api/keys/{key_id}/revoke', { params: { path: { key_id: id } } })),
    );
    if (done) props.keys.reload();
  };
  return (
    <section aria-labelledby="keys-heading">
      <h2 id="keys-heading">Keys</h2>
      <ErrorText error={action.error} />
      <PagedTable
        list={props.keys}
        what="keys"
        empty="No API keys yet."
        columns={['Prefix', 'Access', 'Rate limit', 'Created', 'Last used', 'State']}
        actions
        label="Keys"
        row={(k) => (
          <tr key={k.id}>
            <td>
              <Link to={`/settings/keys/${k.id}`}>
                <code>{k.prefix}…</code>
              </Link>
            </td>
            <td>{scopeLabel(k.scopes)}</td>
            <td>{k.rate_limit_per_min}/min</td>
            <td>{formatTime(k.created_at)}</td>
            <td>{formatTime(k.last_used_at)}</td>
            <td>{k.revoked_at ? 'Revoked' : 'Active'}</td>
            <td>
              {k.revoked_at || !props.manages ? null : (
                <Confirmed verb="Revoke" thing={`key ${k.prefix}`} busy={action.busy} onConfirm={() => revoke(k.id)} />
              )}
            </td>
          </tr>
        )}
      />
    </section>
  );
}
