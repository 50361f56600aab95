import { useState } from 'preact/hooks';
import { api, unwrap, type Schemas } from '../api.ts';
import { useAction, useLoad } from '../hooks.ts';
import { Empty, ErrorText, formatTime, Loaded, Status } from '../ui.tsx';

type PayoutDetails = Schemas['PayoutDetails'];

/**
 * An affiliate's tax form and payout details as the API shows them (masked: the platform never returns more of a
 * TIN or an account than its last four characters), and a button that makes a single-use onboarding link where the
 * affiliate fills them in.
 */
export function TaxAndPayout(props: { affiliateId: string }) {
  const path = { params: { path: { affiliate_id: props.affiliateId } } };
  const forms = useLoad(
    async () => unwrap(await api.GET('/api/v1/affiliates/{affiliate_id}/tax_forms', path)),
    [props.affiliateId],
  );
  const details = useLoad(
    async () => unwrap(await api.GET('/api/v1/affiliates/{affiliate_id}/payout_details', path)),
    [props.affiliateId],
  );
  const [link, setLink] = useState<Schemas['OnboardingLink']>();
  const action = useAction();
  const createLink = async () => {
    const created = await action.run(async () =>
      unwrap(await api.POST('/api/v1/affiliates/{affiliate_id}/onboarding_links', path)),
    );
    if (created) setLink(created);
  };
  return (
    <section aria-labelledby="tax-heading">
      <h2 id="tax-heading">Tax form and payout details</h2>
      <dl class="facts">
        <dt>Tax form</dt>
        <dd data-testid="tax-form">
          <Loaded state={forms} what="tax forms">
            {(page) => {
              const latest = page.data[0];
              if (!latest) return <Empty>No tax form on file.</Empty>;
              return (
                <>
                  {latest.form_type} <Status value={latest.status} /> {latest.legal_name}
                  {latest.tin_masked ? `, TIN ${latest.tin_masked}` : ''}, submitted {formatTime(latest.submitted_at)}
                  {latest.expires_at ? `, expires ${formatTime(latest.expires_at)}` : ''}
                </>
              );
            }}
          </Loaded>
        </dd>
        <dt>Payout details</dt>
        <dd data-testid="payout-details">
          <Loaded state={details} what="payout details">
            {(d) => (d.method ? <>{describe(d)}</> : <Empty>No payout details on file.</Empty>)}
          </Loaded>
        </dd>
      </dl>
      <button type="button" disabled={action.busy} onClick={() => void createLink()}>
        Create onboarding link
      </button>
      <ErrorText error={action.error} />
      {link && (
        <p>
          Send this link to the affiliate; it works once, until {formatTime(link.expires_at)}:{' '}
          <code data-testid="onboarding-url">{link.url}</code>{' '}
          <button type="button" onClick={() => void navigator.clipboard?.writeText(link.url)}>
            Copy link
          </button>
        </p>
      )}
    </section>
  );
}

function describe(d: PayoutDetails): string {
  if (d.method === 'paypal') return `PayPal ${d.paypal_email ?? ''}`;
  if (d.iban) return `Bank transfer, IBAN ${d.iban}`;
  return `Bank transfer, routing ${d.routing_number ?? ''}, account ${d.account_number ?? ''}`;
}
