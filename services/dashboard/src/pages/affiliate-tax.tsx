import { useState } from 'preact/hooks';
import { api, unwrap, type Schemas } from '../api.ts';
import { useAction, useLoad } from '../hooks.ts';
import { Empty, ErrorText, formatTime, Loaded, Status } from '../ui.tsx';

type PayoutDetails = Schemas['PayoutDetails'];
type PayoutDetailsChange = Schemas['PayoutDetailsChange'];

/** How many of the latest changes the page lists; the API pages through the rest. */
const HISTORY_SHOWN = 5;

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
  const history = useLoad(
    async () =>
      unwrap(
        await api.GET('/api/v1/affiliates/{affiliate_id}/payout_details/history', {
          params: { path: { affiliate_id: props.affiliateId }, query: { limit: HISTORY_SHOWN } },
        }),
      ),
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
      <h3 id="payout-history-heading">Payout details history</h3>
      <Loaded state={history} what="payout details history">
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No changes yet.</Empty>
          ) : (
            <ol aria-labelledby="payout-history-heading" data-testid="payout-history">
              {page.data.map((c) => (
                <li key={c.id}>
                  {formatTime(c.changed_at)}, {origin(c)}: {c.before ? describe(c.before) : 'none'} to{' '}
                  {describe(c.after)}
                </li>
              ))}
            </ol>
          )
        }
      </Loaded>
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

/** Who made a change: the key, the dashboard user or the onboarding link, by id (the keys page names keys by id). */
function origin(c: PayoutDetailsChange): string {
  const by = c.actor_id ? ` ${c.actor_id}` : '';
  if (c.source === 'api') return `by API key${by}`;
  if (c.source === 'dashboard') return `by dashboard user${by}`;
  return `by the affiliate through onboarding link${by}`;
}

function describe(
  d: Pick<PayoutDetails, 'paypal_email' | 'iban' | 'routing_number' | 'account_number'> & {
    method: PayoutDetails['method'];
  },
): string {
  if (d.method === 'paypal') return `PayPal ${d.paypal_email ?? ''}`;
  if (d.iban) return `Bank transfer, IBAN ${d.iban}`;
  return `Bank transfer, routing ${d.routing_number ?? ''}, account ${d.account_number ?? ''}`;
}
