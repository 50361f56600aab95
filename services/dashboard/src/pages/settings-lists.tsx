import { api, dash, unwrap } from '../api.ts';
import { useForm, useList, useLoad } from '../hooks.ts';
import { Empty, ErrorText, Field, formatTime, Link, Loaded, PagedTable } from '../ui.tsx';

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

export function Users() {
  const users = useLoad(async () => unwrap(await dash.GET('/dashboard/api/users')), []);
  const form = useForm(
    { email: '', password: '' },
    async (v) => unwrap(await dash.POST('/dashboard/api/users', { body: v })),
    users.reload,
  );
  return (
    <section aria-labelledby="users-heading">
      <h2 id="users-heading">Dashboard users</h2>
      <Loaded state={users} what="users">
        {(list) => (
          <ul class="plain">
            {list.data.map((u) => (
              <li key={u.id}>
                {u.email} <span class="muted">since {formatTime(u.created_at)}</span>
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      <form class="inline-form" onSubmit={form.onSubmit}>
        <Field label="New user’s e-mail" error={form.fieldError('email')}>
          <input type="email" required autoComplete="off" {...form.bind('email')} />
        </Field>
        <Field label="Their password" hint="at least 10 characters" error={form.fieldError('password')}>
          <input type="password" required minLength={10} autoComplete="new-password" {...form.bind('password')} />
        </Field>
        <button type="submit" disabled={form.pending}>
          Add user
        </button>
      </form>
      <ErrorText error={form.error} />
    </section>
  );
}
