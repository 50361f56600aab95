import { useState } from 'preact/hooks';
import { api, dash, unwrap } from '../api.ts';
import { useAction, useLoad, usePager } from '../hooks.ts';
import { Empty, ErrorText, Field, formatTime, Link, Loaded, Pager } from '../ui.tsx';

export function Tiers() {
  const tiers = useLoad(async () => unwrap(await dash.GET('/dashboard/api/tiers')), []);
  const [form, setForm] = useState({ name: '', rate: '', threshold: '' });
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = { name: form.name, rate: Number(form.rate) / 100, threshold: Number(form.threshold) };
    const done = await action.run(async () => unwrap(await dash.POST('/dashboard/api/tiers', { body })));
    if (done) {
      setForm({ name: '', rate: '', threshold: '' });
      tiers.reload();
    }
  };
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
      <form class="inline-form" onSubmit={(e) => void submit(e)}>
        <Field label="Tier name">
          <input
            type="text"
            required
            maxLength={100}
            value={form.name}
            onInput={(e) => setForm({ ...form, name: e.currentTarget.value })}
          />
        </Field>
        <Field label="Tier rate (%)">
          <input
            type="number"
            min={0}
            max={100}
            step="0.0001"
            required
            value={form.rate}
            onInput={(e) => setForm({ ...form, rate: e.currentTarget.value })}
          />
        </Field>
        <Field label="Threshold">
          <input
            type="number"
            min={0}
            step="0.01"
            required
            value={form.threshold}
            onInput={(e) => setForm({ ...form, threshold: e.currentTarget.value })}
          />
        </Field>
        <button type="submit" disabled={action.busy}>
          Add tier
        </button>
      </form>
      <ErrorText error={action.error} />
    </section>
  );
}

export function AllCoupons() {
  const pager = usePager();
  const coupons = useLoad(
    async () =>
      unwrap(
        await api.GET('/api/v1/coupons', {
          params: { query: { limit: 25, ...(pager.cursor ? { cursor: pager.cursor } : {}) } },
        }),
      ),
    [pager.cursor],
  );
  return (
    <section aria-labelledby="coupons-heading">
      <h2 id="coupons-heading">Coupons</h2>
      <p class="muted">Coupons are added on an affiliate’s page.</p>
      <Loaded state={coupons} what="coupons">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No coupons.</Empty>
          ) : (
            <>
              <ul class="plain">
                {page.data.map((c) => (
                  <li key={c.id}>
                    <code>{c.code}</code> for <Link to={`/affiliates/${c.affiliate_id}`}>{c.affiliate_id}</Link>{' '}
                    <span class="muted">{formatTime(c.created_at)}</span>
                  </li>
                ))}
              </ul>
              <Pager
                label="Coupons"
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
  );
}

export function Users() {
  const users = useLoad(async () => unwrap(await dash.GET('/dashboard/api/users')), []);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const done = await action.run(async () =>
      unwrap(await dash.POST('/dashboard/api/users', { body: { email, password } })),
    );
    if (done) {
      setEmail('');
      setPassword('');
      users.reload();
    }
  };
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
      <form class="inline-form" onSubmit={(e) => void submit(e)}>
        <Field label="New user’s e-mail">
          <input
            type="email"
            required
            autoComplete="off"
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </Field>
        <Field label="Their password" hint="at least 10 characters">
          <input
            type="password"
            required
            minLength={10}
            autoComplete="new-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        <button type="submit" disabled={action.busy}>
          Add user
        </button>
      </form>
      <ErrorText error={action.error} />
    </section>
  );
}
