import { useState } from 'preact/hooks';
import { api, unwrap, type Schemas } from '../api.ts';
import { useAction, useForm, useList } from '../hooks.ts';
import { ErrorText, Field, formatMoney, formatTime, Link, Page, PagedTable, Status, StatusSelect } from '../ui.tsx';

type Commission = Schemas['Commission'];
type StatusFilter = '' | Commission['status'];

/** Commissions: filtered by status and affiliate, paged by cursor; approve a pending one, void one with a reason. */
export function CommissionsPage() {
  const initialAffiliate = new URLSearchParams(location.search).get('affiliate_id') ?? '';
  const [status, setStatus] = useState<StatusFilter>('');
  const [affiliateInput, setAffiliateInput] = useState(initialAffiliate);
  const [affiliate, setAffiliate] = useState(initialAffiliate);
  const list = useList(
    async (cursor) =>
      unwrap(
        await api.GET('/api/v1/commissions', {
          params: {
            query: {
              limit: 25,
              ...(status ? { status } : {}),
              ...(affiliate ? { affiliate_id: affiliate } : {}),
              ...(cursor ? { cursor } : {}),
            },
          },
        }),
      ),
    [status, affiliate],
  );
  return (
    <Page title="Commissions">
      <form
        class="inline-form"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setAffiliate(affiliateInput.trim());
        }}
      >
        <StatusSelect
          value={status}
          options={['pending', 'approved', 'paid', 'voided'] as const}
          onChange={setStatus}
        />
        <Field label="Affiliate id">
          <input
            type="text"
            value={affiliateInput}
            onInput={(e) => setAffiliateInput(e.currentTarget.value)}
            placeholder="aff_…"
          />
        </Field>
        <button type="submit">Filter</button>
      </form>
      <PagedTable
        list={list}
        what="commissions"
        empty="No commission matches."
        columns={['Amount', 'Affiliate', 'Order', 'Level', 'Status', 'Created']}
        actions
        label="Commissions"
        row={(c) => <CommissionRow key={c.id} commission={c} onChanged={list.reload} />}
      />
    </Page>
  );
}

function CommissionRow(props: { commission: Commission; onChanged: () => void }) {
  const c = props.commission;
  const [voiding, setVoiding] = useState(false);
  const action = useAction();
  const patch = async (body: Schemas['UpdateCommission']) =>
    unwrap(await api.PATCH('/api/v1/commissions/{commission_id}', { params: { path: { commission_id: c.id } }, body }));
  const approve = async () => {
    if (await action.run(() => patch({ status: 'approved' }))) props.onChanged();
  };
  const voidForm = useForm(
    { void_reason: '' },
    (v) => patch({ status: 'voided', ...(v.void_reason ? { void_reason: v.void_reason } : {}) }),
    props.onChanged,
  );
  return (
    <tr data-commission={c.id}>
      <td>{formatMoney(c.amount, c.currency)}</td>
      <td>
        <Link to={`/affiliates/${c.affiliate_id}`}>{c.affiliate_id}</Link>
      </td>
      <td>{c.order_id}</td>
      <td>{c.level}</td>
      <td>
        <Status value={c.status} />
        {c.void_reason ? <div class="muted">{c.void_reason}</div> : null}
        {c.void_requested_at ? (
          <div class="muted">Void recorded: its payout is on its way; voided if it fails, clawed back if paid</div>
        ) : null}
        {c.clawback ? (
          <div class="muted">
            Clawback {formatMoney(c.clawback.amount, c.currency)}, recovered{' '}
            {formatMoney(c.clawback.recovered, c.currency)}
          </div>
        ) : null}
      </td>
      <td>{formatTime(c.created_at)}</td>
      <td>
        {c.status === 'pending' ? (
          <button
            type="button"
            disabled={action.busy}
            onClick={() => void approve()}
            aria-label={`Approve commission ${c.id}`}
          >
            Approve
          </button>
        ) : null}
        {(c.status === 'pending' || c.status === 'approved') && !c.void_requested_at ? (
          voiding ? (
            <form class="confirm" aria-label={`Void commission ${c.id}`} onSubmit={voidForm.onSubmit}>
              <Field label="Reason" error={voidForm.fieldError('void_reason')}>
                <input type="text" maxLength={200} {...voidForm.bind('void_reason')} />
              </Field>
              <button type="submit" class="danger" disabled={voidForm.pending}>
                Confirm void
              </button>
              <button type="button" onClick={() => setVoiding(false)}>
                Cancel
              </button>
            </form>
          ) : (
            <button
              type="button"
              class="danger"
              onClick={() => setVoiding(true)}
              aria-label={`Void commission ${c.id}`}
            >
              Void
            </button>
          )
        ) : null}
        <ErrorText error={action.error ?? voidForm.error} />
      </td>
    </tr>
  );
}
