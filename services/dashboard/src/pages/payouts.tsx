import { useState } from 'preact/hooks';
import { api, RequestFailed, unwrap, type Schemas } from '../api.ts';
import { useAction, useForm, useList } from '../hooks.ts';
import { ErrorText, Field, formatMoney, formatTime, Link, Page, PagedTable, Status, StatusSelect } from '../ui.tsx';

type Payout = Schemas['Payout'];
type PayoutExport = Schemas['PayoutExport'];
type StatusFilter = '' | Payout['status'];
type Layout = 'paypal' | 'bank';

/**
 * Payouts: create them from the approved commissions, list them by status (held ones with their reason, exported ones
 * and the clawbacks they deduct), move them (sent with a reference, paid, failed with a reason, canceled), download the
 * pending ones as a CSV file, and see who exported which payouts when.
 */
export function PayoutsPage() {
  const [status, setStatus] = useState<StatusFilter>('');
  const create = useAction();
  const [created, setCreated] = useState<number>();
  const [exports, setExports] = useState(0);
  const list = useList(
    async (cursor) =>
      unwrap(
        await api.GET('/api/v1/payouts', {
          params: { query: { limit: 25, ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [status],
  );
  const createPayouts = async () => {
    setCreated(undefined);
    const result = await create.run(async () => unwrap(await api.POST('/api/v1/payouts', { body: {} })));
    if (result) {
      setCreated(result.created_count);
      list.reset();
      list.reload();
    }
  };
  return (
    <Page
      title="Payouts"
      actions={
        <button type="button" disabled={create.busy} onClick={() => void createPayouts()}>
          Create payouts
        </button>
      }
    >
      <p class="muted">
        Creating payouts groups each affiliate's approved commissions by currency once they reach the minimum payout set
        in Settings.
      </p>
      {created !== undefined ? (
        <p role="status">
          {created === 0 ? 'No new payout: nothing reached the minimum.' : `Created ${created} payout(s).`}
        </p>
      ) : null}
      <ErrorText error={create.error} />
      <div class="inline-form">
        <StatusSelect
          value={status}
          options={['pending', 'sending', 'sent', 'paid', 'failed', 'canceled'] as const}
          onChange={setStatus}
        />
        <ExportCsv
          onExported={() => {
            setExports((n) => n + 1);
            list.reload();
          }}
        />
      </div>
      <PagedTable
        list={list}
        what="payouts"
        empty="No payout matches."
        columns={['Amount', 'Affiliate', 'Status', 'Commissions', 'Created']}
        actions
        label="Payouts"
        row={(p) => <PayoutRow key={p.id} payout={p} onChanged={list.reload} />}
      />
      <ExportsList round={exports} />
    </Page>
  );
}

/**
 * Downloads the pending payouts as CSV: the PayPal Payouts batch file, or the bank transfers. The file holds bank
 * details in clear; the export is recorded and freezes the payouts it holds.
 */
function ExportCsv(props: { onExported: () => void }) {
  const [layout, setLayout] = useState<Layout>('paypal');
  const action = useAction();
  const download = () =>
    action.run(async () => {
      const result = await api.GET('/api/v1/payouts/export', {
        params: { query: { status: 'pending', layout } },
        parseAs: 'text',
      });
      if (!result.response.ok) throw new RequestFailed(result.error);
      const url = URL.createObjectURL(new Blob([result.data ?? ''], { type: 'text/csv' }));
      const link = document.createElement('a');
      link.href = url;
      link.download = `payouts-${layout}-${new Date().toISOString().slice(0, 10)}.csv`;
      link.click();
      URL.revokeObjectURL(url);
      props.onExported();
    });
  return (
    <>
      <Field label="CSV layout">
        <select value={layout} onChange={(e) => setLayout(e.currentTarget.value as Layout)}>
          <option value="paypal">PayPal Payouts</option>
          <option value="bank">Bank transfers</option>
        </select>
      </Field>
      <button type="button" disabled={action.busy} onClick={() => void download()}>
        Export pending as CSV
      </button>
      <ErrorText error={action.error} />
    </>
  );
}

/** The record of CSV exports: who made each (an API key or a dashboard user), when, and how many payouts it held. */
function ExportsList(props: { round: number }) {
  const list = useList(
    async (cursor) =>
      unwrap(
        await api.GET('/api/v1/payout_exports', { params: { query: { limit: 10, ...(cursor ? { cursor } : {}) } } }),
      ),
    [props.round],
  );
  return (
    <section aria-labelledby="exports-heading">
      <h2 id="exports-heading">Exports</h2>
      <PagedTable
        list={list}
        what="exports"
        empty="No payout has been exported yet."
        columns={['When', 'By', 'Layout', 'Payouts']}
        label="Exports"
        row={(e: PayoutExport) => (
          <tr key={e.id} data-export={e.id}>
            <td>{formatTime(e.created_at)}</td>
            <td>{e.dashboard_user_id ? `Dashboard user ${e.dashboard_user_id}` : `API key ${e.api_key_id ?? ''}`}</td>
            <td>{e.layout === 'bank' ? 'Bank transfers' : 'PayPal Payouts'}</td>
            <td>{e.payout_ids.length}</td>
          </tr>
        )}
      />
    </section>
  );
}

type Move = Schemas['UpdatePayout'];

function PayoutRow(props: { payout: Payout; onChanged: () => void }) {
  const p = props.payout;
  const [asking, setAsking] = useState<'sent' | 'failed' | null>(null);
  const action = useAction();
  const patch = async (body: Move) =>
    unwrap(await api.PATCH('/api/v1/payouts/{payout_id}', { params: { path: { payout_id: p.id } }, body }));
  const moved = () => {
    setAsking(null);
    props.onChanged();
  };
  const move = async (body: Move) => {
    if (await action.run(() => patch(body))) moved();
  };
  // Sent takes an optional reference, failed a reason: one text field, sent as what the move needs.
  const ask = useForm(
    { text: '' },
    (v) =>
      patch(
        asking === 'sent'
          ? { status: 'sent', method: 'manual', ...(v.text.trim() ? { reference: v.text.trim() } : {}) }
          : { status: 'failed', failure_reason: v.text.trim() },
      ),
    moved,
  );
  const label = (what: string) => `${what} payout ${p.id}`;
  return (
    <tr data-payout={p.id}>
      <td>{formatMoney(p.amount, p.currency)}</td>
      <td>
        <Link to={`/affiliates/${p.affiliate_id}`}>{p.affiliate_id}</Link>
      </td>
      <td>
        <Status value={p.status} />
        {p.held_reason ? (
          <div class="error">Held: {p.held_reason === 'tax_form_required' ? 'tax form required' : p.held_reason}</div>
        ) : null}
        {p.failure_reason ? <div class="muted">{p.failure_reason}</div> : null}
        {p.reference ? <div class="muted">Ref. {p.reference}</div> : null}
        {p.exported_at ? <div class="muted">Exported {formatTime(p.exported_at)}</div> : null}
        {p.adjustments.map((a) => (
          <div key={a.commission_id} class="muted">
            Clawback {formatMoney(a.amount, p.currency)} (commission {a.commission_id})
          </div>
        ))}
      </td>
      <td>{p.commission_count}</td>
      <td>{formatTime(p.created_at)}</td>
      <td>
        {asking ? (
          <form
            class="confirm"
            aria-label={label(asking === 'sent' ? 'Mark sent' : 'Mark failed')}
            onSubmit={ask.onSubmit}
          >
            <Field
              label={asking === 'sent' ? 'Reference' : 'Reason'}
              error={ask.fieldError(asking === 'sent' ? 'reference' : 'failure_reason')}
            >
              <input type="text" maxLength={200} required={asking === 'failed'} {...ask.bind('text')} />
            </Field>
            <button type="submit" disabled={ask.pending}>
              {asking === 'sent' ? 'Confirm sent' : 'Confirm failed'}
            </button>
            <button type="button" onClick={() => setAsking(null)}>
              Cancel
            </button>
          </form>
        ) : p.status === 'pending' ? (
          <>
            <button
              type="button"
              disabled={p.held_reason !== null}
              onClick={() => setAsking('sent')}
              aria-label={label('Mark sent')}
            >
              Mark sent
            </button>
            <button
              type="button"
              class="danger"
              disabled={action.busy}
              onClick={() => void move({ status: 'canceled' })}
              aria-label={label('Cancel')}
            >
              Cancel payout
            </button>
          </>
        ) : p.status === 'sent' ? (
          <>
            <button
              type="button"
              disabled={action.busy}
              onClick={() => void move({ status: 'paid' })}
              aria-label={label('Mark paid')}
            >
              Mark paid
            </button>
            <button type="button" class="danger" onClick={() => setAsking('failed')} aria-label={label('Mark failed')}>
              Mark failed
            </button>
          </>
        ) : null}
        <ErrorText error={action.error ?? ask.error} />
      </td>
    </tr>
  );
}
