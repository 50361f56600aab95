import { useState } from 'preact/hooks';
import { api, unwrap } from '../api.ts';
import { useForm, useList } from '../hooks.ts';
import { Applications } from './applications.tsx';
import { navigate } from '../router.ts';
import { ErrorText, Field, formatTime, Link, Page, PagedTable, Status, StatusSelect } from '../ui.tsx';

type StatusFilter = '' | 'pending' | 'approved' | 'rejected' | 'suspended';

/**
 * Affiliates: the applications waiting for a decision, the list (status filter, search by e-mail, cursor pages) and
 * a form to add one under a parent.
 */
export function AffiliatesPage() {
  const [status, setStatus] = useState<StatusFilter>('');
  const [email, setEmail] = useState('');
  const [search, setSearch] = useState('');
  const list = useList(
    async (cursor) =>
      unwrap(
        await api.GET('/api/v1/affiliates', {
          params: {
            query: {
              limit: 25,
              ...(status ? { status } : {}),
              ...(search ? { email: search } : {}),
              ...(cursor ? { cursor } : {}),
            },
          },
        }),
      ),
    [status, search],
  );
  return (
    <Page title="Affiliates">
      <Applications />
      <CreateAffiliate />
      <section aria-labelledby="list-heading">
        <h2 id="list-heading">All affiliates</h2>
        <form
          class="inline-form"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            setSearch(email.trim());
          }}
        >
          <StatusSelect
            value={status}
            options={['pending', 'approved', 'rejected', 'suspended'] as const}
            onChange={setStatus}
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
        <PagedTable
          list={list}
          what="affiliates"
          empty={search || status ? 'No affiliate matches.' : 'No affiliates yet: add the first one above.'}
          columns={['Name', 'E-mail', 'Status', 'Joined']}
          label="Affiliates"
          row={(a) => (
            <tr key={a.id}>
              <AffiliateCells affiliate={a} />
              <td>
                <Status value={a.status} />
              </td>
              <td>{formatTime(a.created_at)}</td>
            </tr>
          )}
        />
      </section>
    </Page>
  );
}

function CreateAffiliate() {
  const form = useForm(
    { email: '', display_name: '', parent_email: '', status: 'approved' },
    async (v) =>
      unwrap(
        await api.POST('/api/v1/affiliates', {
          body: {
            email: v.email,
            status: v.status as 'approved' | 'pending',
            ...(v.display_name ? { display_name: v.display_name } : {}),
            ...(v.parent_email ? { parent_email: v.parent_email } : {}),
          },
        }),
      ),
    (created) => navigate(`/affiliates/${created.id}`),
  );
  return (
    <section aria-labelledby="create-affiliate">
      <h2 id="create-affiliate">Add an affiliate</h2>
      <form class="inline-form" onSubmit={form.onSubmit}>
        <Field label="E-mail" error={form.fieldError('email')}>
          <input type="email" required {...form.bind('email')} />
        </Field>
        <Field label="Display name (optional)" error={form.fieldError('display_name')}>
          <input type="text" maxLength={200} {...form.bind('display_name')} />
        </Field>
        <Field label="Parent’s e-mail (optional)" error={form.fieldError('parent_email')}>
          <input type="email" {...form.bind('parent_email')} />
        </Field>
        <Field label="Starts as">
          <select {...form.bind('status')}>
            <option value="approved">Approved</option>
            <option value="pending">Pending</option>
          </select>
        </Field>
        <button type="submit" class="primary" disabled={form.pending}>
          Add affiliate
        </button>
      </form>
      <ErrorText error={form.error} />
    </section>
  );
}

/** An affiliate's first two cells in a table: the name, linking to their page, and the e-mail. */
export const AffiliateCells = (props: { affiliate: { id: string; display_name: string; email: string } }) => (
  <>
    <td>
      <Link to={`/affiliates/${props.affiliate.id}`}>{props.affiliate.display_name}</Link>
    </td>
    <td>{props.affiliate.email}</td>
  </>
);
