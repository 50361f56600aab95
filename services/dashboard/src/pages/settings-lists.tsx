import { useEffect, useState } from 'preact/hooks';
import { api, dash, unwrap, type DashboardSchema, type Session } from '../api.ts';
import { useAction, useForm, useList, useLoad } from '../hooks.ts';
import { Confirmed, Empty, ErrorText, Field, formatTime, Link, Loaded, PagedTable } from '../ui.tsx';
import { TransferOwnership } from './settings-team.tsx';

export function Tiers() {
  const tiers = useLoad(async () => unwrap(await dash.GET('/dashboard/api/tiers')), []);
  const form = useForm(
    { name: '', rate: '', threshold: '' },
    async (v) =>
      unwrap(
        await dash.POST('/dashboard/api/tiers', {
          body: { name: v.name, rate: Number(v.rate) / 100, threshold: Number(v.threshold) },
        }),
      ),
    tiers.reload,
  );
  return (
    <section aria-labelledby="tiers-heading">
      <h2 id="tiers-heading">Tiers</h2>
      <Loaded state={tiers} what="tiers">
        {(list) =>
          list.data.length === 0 ? (
            <Empty>No tiers.</Empty>
          ) : (
            <ul class="plain">
              {list.data.map((t) => (
                <li key={t.id}>
                  <strong>{t.name}</strong>: {t.rate * 100}% from {t.threshold} attributed revenue
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
      <form class="inline-form" onSubmit={form.onSubmit}>
        <Field label="Tier name" error={form.fieldError('name')}>
          <input type="text" required maxLength={100} {...form.bind('name')} />
        </Field>
        <Field label="Tier rate (%)" error={form.fieldError('rate')}>
          <input type="number" min={0} max={100} step="0.0001" required {...form.bind('rate')} />
        </Field>
        <Field label="Threshold" error={form.fieldError('threshold')}>
          <input type="number" min={0} step="0.01" required {...form.bind('threshold')} />
        </Field>
        <button type="submit" disabled={form.pending}>
          Add tier
        </button>
      </form>
      <ErrorText error={form.error} />
    </section>
  );
}

export function AllCoupons() {
  const coupons = useList(async (cursor) =>
    unwrap(await api.GET('/api/v1/coupons', { params: { query: { limit: 25, ...(cursor ? { cursor } : {}) } } })),
  );
  return (
    <section aria-labelledby="coupons-heading">
      <h2 id="coupons-heading">Coupons</h2>
      <p class="muted">Coupons are added on an affiliate’s page.</p>
      <PagedTable
        list={coupons}
        what="coupons"
        empty="No coupons."
        columns={['Code', 'Affiliate', 'Created']}
        label="Coupons"
        row={(c) => (
          <tr key={c.id}>
            <td>
              <code>{c.code}</code>
            </td>
            <td>
              <Link to={`/affiliates/${c.affiliate_id}`}>{c.affiliate_id}</Link>
            </td>
            <td>{formatTime(c.created_at)}</td>
          </tr>
        )}
      />
    </section>
  );
}

type Role = DashboardSchema['DashboardUser']['role'];
const ROLE_NAMES: Role[] = ['owner', 'admin', 'developer', 'viewer'];

/**
 * The team: each user with their role, changed or removed here by a role with the `team` permission (the gateway
 * decides; the page only leaves out what the session's role cannot do).
 */
export function Users(props: { session: Session }) {
  const manages = props.session.user.permissions.includes('team');
  const users = useLoad(async () => unwrap(await dash.GET('/dashboard/api/users')), []);
  const action = useAction();
  const form = useForm(
    { email: '', password: '', role: 'viewer' },
    async (v) => unwrap(await dash.POST('/dashboard/api/users', { body: { ...v, role: v.role as Role } })),
    users.reload,
  );
  // A role being changed shows as chosen until the list is read again, or goes back if the change is refused.
  const [chosen, setChosen] = useState<Record<string, Role>>({});
  useEffect(() => setChosen({}), [users.data]);
  const change = async (work: () => Promise<unknown>) => {
    const done = await action.run(work);
    if (done === undefined) setChosen({});
    else users.reload();
  };
  const setRole = (id: string, role: Role) => {
    setChosen({ [id]: role });
    return change(async () =>
      unwrap(await dash.PATCH('/dashboard/api/users/{user_id}', { params: { path: { user_id: id } }, body: { role } })),
    );
  };
  const remove = (id: string) =>
    change(async () => {
      // 204: no body to return, so the change says it happened.
      unwrap(await dash.DELETE('/dashboard/api/users/{user_id}', { params: { path: { user_id: id } } }));
      return true;
    });
  return (
    <section aria-labelledby="users-heading">
      <h2 id="users-heading">Dashboard users</h2>
      <ErrorText error={action.error} />
      <Loaded state={users} what="users">
        {(list) => (
          <ul class="plain">
            {list.data.map((u) => (
              <li key={u.id}>
                {u.email} <span class="muted">since {formatTime(u.created_at)}</span>{' '}
                {manages ? (
                  <select
                    aria-label={`Role of ${u.email}`}
                    value={chosen[u.id] ?? u.role}
                    disabled={action.busy}
                    onChange={(e) => void setRole(u.id, (e.target as HTMLSelectElement).value as Role)}
                  >
                    {ROLE_NAMES.map((r) => (
                      <option key={r} value={r}>
                        {r}
                      </option>
                    ))}
                  </select>
                ) : (
                  <span class="muted">{u.role}</span>
                )}{' '}
                {manages ? (
                  <Confirmed verb="Remove" thing={u.email} busy={action.busy} onConfirm={() => remove(u.id)} />
                ) : null}{' '}
                <TransferOwnership session={props.session} member={u} />
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      {manages ? (
        <form class="inline-form" onSubmit={form.onSubmit}>
          <Field label="New user’s e-mail" error={form.fieldError('email')}>
            <input type="email" required autoComplete="off" {...form.bind('email')} />
          </Field>
          <Field label="Their password" hint="at least 10 characters" error={form.fieldError('password')}>
            <input type="password" required minLength={10} autoComplete="new-password" {...form.bind('password')} />
          </Field>
          <Field label="Their role" error={form.fieldError('role')}>
            <select {...form.bind('role')}>
              {ROLE_NAMES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </Field>
          <button type="submit" disabled={form.pending}>
            Add user
          </button>
        </form>
      ) : null}
      <ErrorText error={form.error} />
    </section>
  );
}
