import { useState } from 'preact/hooks';
import { api, unwrap } from '../api.ts';
import { useAction, useLoad, usePager } from '../hooks.ts';
import { navigate } from '../router.ts';
import { Empty, ErrorText, Field, formatTime, Link, Loaded, Page, Pager, Status, StatusSelect } from '../ui.tsx';

type StatusFilter = '' | 'pending' | 'approved' | 'suspended';

/** Affiliates: the list (status filter, search by e-mail, cursor pages) and a form to add one under a parent. */
export function AffiliatesPage() {
  const [status, setStatus] = useState<StatusFilter>('');
  const [email, setEmail] = useState('');
  const [search, setSearch] = useState('');
  const pager = usePager();
  const list = useLoad(
    async () =>
      unwrap(
        await api.GET('/api/v1/affiliates', {
          params: {
            query: {
              limit: 25,
              ...(status ? { status } : {}),
              ...(search ? { email: search } : {}),
              ...(pager.cursor ? { cursor: pager.cursor } : {}),
            },
          },
        }),
      ),
    [status, search, pager.cursor],
  );
  return (
    <Page title="Affiliates">
      <CreateAffiliate />
      <section aria-labelledby="list-heading">
        <h2 id="list-heading">All affiliates</h2>
        <form
          class="inline-form"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            pager.reset();
            setSearch(email.trim());
          }}
        >
          <StatusSelect
            value={status}
            options={['pending', 'approved', 'suspended'] as const}
            onChange={(v) => {
              pager.reset();
              setStatus(v);
            }}
          />
          <Field label="E-mail">
            <input
              type="email"
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
              placeholder="jane@example.com"
            />
          </Field>
          <button type="submit">Search</button>
          {search ? (
            <button
              type="button"
              class="link-button"
              onClick={() => {
                setEmail('');
                setSearch('');
              }}
            >
              Clear search
            </button>
          ) : null}
        </form>
        <Loaded state={list} what="affiliates">
          {(page) =>
            page.data.length === 0 ? (
              <Empty>
                {search || status ? 'No affiliate matches.' : 'No affiliates yet: add the first one above.'}
              </Empty>
            ) : (
              <>
                <div class="table-wrap" tabIndex={0}>
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Name</th>
                        <th scope="col">E-mail</th>
                        <th scope="col">Status</th>
                        <th scope="col">Joined</th>
                      </tr>
                    </thead>
                    <tbody>
                      {page.data.map((a) => (
                        <tr key={a.id}>
                          <td>
                            <Link to={`/affiliates/${a.id}`}>{a.display_name}</Link>
                          </td>
                          <td>{a.email}</td>
                          <td>
                            <Status value={a.status} />
                          </td>
                          <td>{formatTime(a.created_at)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
                <Pager
                  label="Affiliates"
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

function CreateAffiliate() {
  const [form, setForm] = useState({
    email: '',
    display_name: '',
    parent_email: '',
    status: 'approved' as 'approved' | 'pending',
  });
  const action = useAction();
  const set = (k: keyof typeof form) => (e: Event) =>
    setForm({ ...form, [k]: (e.currentTarget as HTMLInputElement).value });
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = {
      email: form.email,
      status: form.status,
      ...(form.display_name ? { display_name: form.display_name } : {}),
      ...(form.parent_email ? { parent_email: form.parent_email } : {}),
    };
    const created = await action.run(async () => unwrap(await api.POST('/api/v1/affiliates', { body })));
    if (created) navigate(`/affiliates/${created.id}`);
  };
  return (
    <section aria-labelledby="create-affiliate">
      <h2 id="create-affiliate">Add an affiliate</h2>
      <form class="inline-form" onSubmit={(e) => void submit(e)}>
        <Field label="E-mail">
          <input type="email" required value={form.email} onInput={set('email')} />
        </Field>
        <Field label="Display name (optional)">
          <input type="text" maxLength={200} value={form.display_name} onInput={set('display_name')} />
        </Field>
        <Field label="Parent’s e-mail (optional)">
          <input type="email" value={form.parent_email} onInput={set('parent_email')} />
        </Field>
        <Field label="Starts as">
          <select value={form.status} onChange={set('status')}>
            <option value="approved">Approved</option>
            <option value="pending">Pending</option>
          </select>
        </Field>
        <button type="submit" class="primary" disabled={action.busy}>
          Add affiliate
        </button>
      </form>
      <ErrorText error={action.error} />
    </section>
  );
}
