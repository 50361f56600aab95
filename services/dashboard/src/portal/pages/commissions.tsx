import { useList } from '../../hooks.ts';
import { formatTime, Page, PagedTable, Status } from '../../ui.tsx';
import { portalPage, type Commission } from '../api.ts';
import { money } from '../money.ts';

/** The affiliate's commissions, newest first, paged: never the customer's data beyond the order's masked id. */
export function CommissionsPage() {
  const list = useList((cursor) => portalPage<Commission>('/commissions', cursor));
  return (
    <Page title="Commissions">
      <PagedTable
        list={list}
        what="commissions"
        empty="No commission yet."
        label="Commissions"
        caption="Your commissions"
        columns={['Status', 'Amount', 'Date', 'Order']}
        row={(c) => (
          <tr key={c.id} data-commission={c.id}>
            <td>
              <Status value={c.status} />
            </td>
            <td>{money(c.amount, c.currency)}</td>
            <td>{formatTime(c.created_at)}</td>
            <td>{c.order ?? '—'}</td>
          </tr>
        )}
      />
    </Page>
  );
}
