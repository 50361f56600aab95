import { useState } from 'preact/hooks';
import { useAction, useLoad } from '../../hooks.ts';
import { Empty, ErrorText, formatTime, Loaded, Page, Status, Table } from '../../ui.tsx';
import { portal, type MaskedDetails, type PayoutSettings } from '../api.ts';
import { PayoutDetailsForm, TaxFormForm } from './payout-forms.tsx';

/**
 * The payout details and tax forms on file, masked. Changing them takes a fresh link mailed to the affiliate's
 * address (whoever holds a session alone cannot redirect the money): after it, for 15 minutes, the two forms.
 */
export function PayoutSettingsPage() {
  const settings = useLoad(() => portal<PayoutSettings>('GET', '/payout-settings'), []);
  const [saved, setSaved] = useState<string>();
  const done = (what: string) => () => {
    setSaved(what);
    settings.reload();
  };
  return (
    <Page title="Payout settings">
      <Loaded state={settings} what="your payout settings">
        {(s) => (
          <>
            <section aria-labelledby="details-heading">
              <h2 id="details-heading">Payout details</h2>
              <Details details={s.payout_details} />
            </section>
            <section aria-labelledby="tax-heading">
              <h2 id="tax-heading">Tax forms</h2>
              {s.tax_forms.length === 0 ? (
                <Empty>No tax form on file.</Empty>
              ) : (
                <Table
                  columns={['Form', 'Status', 'Signed', 'Expires']}
                  rows={s.tax_forms}
                  caption="Your tax forms"
                  row={(f) => (
                    <tr key={f.id}>
                      <td>{f.type}</td>
                      <td>
                        <Status value={f.status} />
                      </td>
                      <td>{f.signed_at ? f.signed_at.slice(0, 10) : '—'}</td>
                      <td>{formatTime(f.expires_at)}</td>
                    </tr>
                  )}
                />
              )}
            </section>
            <section aria-labelledby="change-heading">
              <h2 id="change-heading">Change them</h2>
              {saved ? <p role="status">{saved}</p> : null}
              {s.can_change_payout_details ? (
                <>
                  <p>You can change them until {formatTime(s.can_change_until)}.</p>
                  <PayoutDetailsForm onSaved={done('Your payout details are saved.')} />
                  <TaxFormForm onSaved={done('Your tax form is saved.')} />
                </>
              ) : (
                <ChangeLink />
              )}
            </section>
          </>
        )}
      </Loaded>
    </Page>
  );
}

/** What is on file, as the API masks it (never more of an account than its last characters). */
function Details(props: { details: MaskedDetails | null }) {
  if (!props.details) return <Empty>No payout details on file.</Empty>;
  const rows = Object.entries(props.details).filter(([k, v]) => k !== 'updated_at' && v !== null && v !== '');
  return (
    <dl class="facts" data-testid="payout-details">
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k[0]!.toUpperCase() + k.slice(1).replaceAll('_', ' ')}</dt>
          <dd>{k === 'method' ? (v === 'paypal' ? 'PayPal' : 'Bank transfer') : v}</dd>
        </div>
      ))}
    </dl>
  );
}

/** The button that mails a fresh link to change payout details and tax forms. */
function ChangeLink() {
  const action = useAction();
  const [sent, setSent] = useState(false);
  const send = async () => {
    if (await action.run(async () => (await portal('POST', '/payout-settings/link'), true))) setSent(true);
  };
  return (
    <>
      <p>To change your payout details or tax forms, open the link we e-mail you (it works once, for 15 minutes).</p>
      <button type="button" disabled={action.busy} onClick={() => void send()}>
        Send me a link to change them
      </button>
      <ErrorText error={action.error} />
      {sent ? <p role="status">Check your e-mail: the link is on its way.</p> : null}
    </>
  );
}
