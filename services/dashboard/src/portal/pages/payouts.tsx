import { useList } from '../../hooks.ts';
import { formatTime, Page, PagedTable, Status } from '../../ui.tsx';
import { portalPage, type Payout } from '../api.ts';
import { money } from '../money.ts';

const METHODS: Record<string, string> = { paypal: 'PayPal', bank: 'Bank transfer' };

/** The affiliate's payouts, newest first, paged: status, amount, method, when made and when paid. */
export function PayoutsPage() {
  const list = useList((cursor) => portalPage<Payout>('/payouts', cursor));
  return (
    <Page title="Payouts">
      <PagedTable
        list={list}
        what="payouts"
        empty="No payout yet."
        label="Payouts"
        caption="Your payouts"
        columns={['Status', 'Amount', 'Method', 'Created', 'Paid']}
        row={(p) => (
          <tr key={p.id} data-payout={p.id}>
            <td>
              <Status value={p.status} />
            </td>
            <td>{money(p.amount, p.currency)}</td>
            <td>{p.method ? (METHODS[p.method] ?? p.method) : '—'}</td>
            <td>{formatTime(p.created_at)}</td>
            <td>{formatTime(p.paid_at)}</td>
          </tr>
        )}
      />
    </Page>
  );
}
