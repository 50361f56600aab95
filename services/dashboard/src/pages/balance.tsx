import { useState } from 'preact/hooks';
import { dash, unwrap, type DashboardSchema, type Session } from '../api.ts';
import { useAction, useForm, useList, useLoad } from '../hooks.ts';
import { Empty, ErrorText, Field, formatMoney, formatTime, Loaded, Page, PagedTable, Status, Table } from '../ui.tsx';

type Overview = DashboardSchema['BalanceOverview'];
type Account = NonNullable<Overview['account']>;
type Funding = DashboardSchema['BalanceFunding'];

const money = (m: { amount: string; currency: string }) => formatMoney(Number(m.amount), m.currency.toUpperCase());

const FUNDING_METHODS: { value: Funding['payment_method']; label: string }[] = [
  { value: 'pm_card_visa', label: 'Visa test card (pending until available)' },
  { value: 'pm_card_bypassPending', label: 'Visa test card, available at once' },
  { value: 'pm_card_chargeDeclined', label: 'Test card that is declined' },
];

/**
 * Balance: the merchant's connected account on the platform payment API, which (live) funds platform payouts to
 * affiliates: its onboarding (with a link to complete it), its balance, funding it with test cards (test mode only),
 * and its transactions.
 */
export function BalancePage(props: { session: Session }) {
  const [round, setRound] = useState(0);
  const overview = useLoad(async () => unwrap(await dash.GET('/dashboard/api/balance')), [round]);
  return (
    <Page title="Balance">
      <Loaded state={overview} what="the balance">
        {(o) =>
          o.account === null ? (
            <OpenAccount session={props.session} onOpened={() => setRound((r) => r + 1)} />
          ) : (
            <>
              <Onboarding account={o.account} />
              <Figures overview={o} />
              {/* Test cards fund test accounts only: a live account is funded by real payments to it. */}
              {o.account.livemode ? null : <Fund onFunded={() => setRound((r) => r + 1)} />}
              <Transactions round={round} />
            </>
          )
        }
      </Loaded>
    </Page>
  );
}

/** No account yet: an owner or admin opens the merchant's own, then completes its onboarding below. */
function OpenAccount(props: { session: Session; onOpened: () => void }) {
  const action = useAction();
  const open = async () => {
    const opened = await action.run(async () =>
      unwrap(await dash.POST('/dashboard/api/balance/account', { body: {} })),
    );
    if (opened) props.onOpened();
  };
  if (!props.session.user.permissions.includes('payouts'))
    return <Empty>No connected account yet. An owner or admin opens it here.</Empty>;
  return (
    <section aria-labelledby="open-heading">
      <h2 id="open-heading">Connected account</h2>
      <p>
        Payouts to affiliates through the platform are paid from the merchant’s connected account. Open it, then
        complete its onboarding.
      </p>
      <button type="button" class="primary" disabled={action.busy} onClick={() => void open()}>
        Open a connected account
      </button>
      <ErrorText error={action.error} />
    </section>
  );
}

function Onboarding(props: { account: Account }) {
  const { account } = props;
  const action = useAction();
  const complete = account.payouts_enabled && account.currently_due.length === 0;
  const open = async () => {
    const link = await action.run(async () => unwrap(await dash.POST('/dashboard/api/balance/account_link')));
    if (link) location.assign(link.url);
  };
  return (
    <section aria-labelledby="onboarding-heading">
      <h2 id="onboarding-heading">Connected account</h2>
      <dl class="facts">
        <dt>Account</dt>
        <dd>
          <code>{account.id}</code> {account.livemode ? null : <span class="muted">(test mode)</span>}
        </dd>
        <dt>Onboarding</dt>
        <dd>
          <Status value={complete ? 'complete' : 'details_required'} />
        </dd>
        <dt>Payouts</dt>
        <dd>{account.payouts_enabled ? 'Enabled' : 'Not enabled'}</dd>
        <dt>Payments</dt>
        <dd>{account.charges_enabled ? 'Enabled' : 'Not enabled'}</dd>
        {account.currently_due.length > 0 ? (
          <>
            <dt>Still needed</dt>
            <dd>{account.currently_due.join(', ')}</dd>
          </>
        ) : null}
      </dl>
      <button type="button" class={complete ? undefined : 'primary'} disabled={action.busy} onClick={() => void open()}>
        {complete ? 'Update onboarding details' : 'Complete onboarding'}
      </button>
      <ErrorText error={action.error} />
    </section>
  );
}

function Figures(props: { overview: Overview }) {
  const currencies = [...new Set([...props.overview.available, ...props.overview.pending].map((m) => m.currency))];
  const of = (list: Overview['available'], currency: string) =>
    money(list.find((m) => m.currency === currency) ?? { amount: '0', currency });
  return (
    <section aria-labelledby="figures-heading">
      <h2 id="figures-heading">Balance</h2>
      {currencies.length === 0 ? (
        <Empty>{props.overview.account?.livemode ? 'Nothing yet.' : 'Nothing yet: fund the account below.'}</Empty>
      ) : (
        <Table
          columns={['Currency', 'Available', 'Pending']}
          rows={currencies}
          row={(c) => (
            <tr key={c}>
              <th scope="row">{c.toUpperCase()}</th>
              <td>{of(props.overview.available, c)}</td>
              <td>{of(props.overview.pending, c)}</td>
            </tr>
          )}
        />
      )}
    </section>
  );
}

function Fund(props: { onFunded: () => void }) {
  const [done, setDone] = useState<string>();
  const form = useForm(
    { amount: '', currency: 'usd', payment_method: 'pm_card_visa' },
    async (v) => {
      setDone(undefined);
      const body = { ...v, amount: v.amount.trim(), payment_method: v.payment_method as Funding['payment_method'] };
      return unwrap(await dash.POST('/dashboard/api/balance/fund', { body }));
    },
    (intent) => {
      setDone(`Payment ${intent.id} ${intent.status.replace(/_/g, ' ')}: ${money(intent.amount)}`);
      props.onFunded();
    },
  );
  return (
    <section aria-labelledby="fund-heading">
      <h2 id="fund-heading">Fund the account</h2>
      <form onSubmit={form.onSubmit}>
        <div class="inline-form">
          <Field label="Amount" error={form.fieldError('amount')}>
            <input
              type="text"
              inputMode="decimal"
              required
              size={10}
              pattern="[0-9]+(\.[0-9]{1,3})?"
              {...form.bind('amount')}
              placeholder="250.00"
            />
          </Field>
          <Field label="Currency" error={form.fieldError('currency')}>
            <select {...form.bind('currency')}>
              {['usd', 'eur', 'gbp', 'cad', 'aud', 'jpy'].map((c) => (
                <option key={c} value={c}>
                  {c.toUpperCase()}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Payment method" error={form.fieldError('payment_method')}>
            <select {...form.bind('payment_method')}>
              {FUNDING_METHODS.map((m) => (
                <option key={m.value} value={m.value}>
                  {m.label}
                </option>
              ))}
            </select>
          </Field>
        </div>
        <button type="submit" class="primary" disabled={form.pending}>
          Fund
        </button>
        {done ? (
          <p class="notice" role="status">
            {done}
          </p>
        ) : null}
        <ErrorText error={form.error} />
      </form>
    </section>
  );
}

function Transactions(props: { round: number }) {
  const list = useList(
    async (cursor) =>
      unwrap(
        await dash.GET('/dashboard/api/balance/transactions', {
          params: { query: cursor ? { starting_after: cursor } : {} },
        }),
      ),
    [props.round],
  );
  return (
    <section aria-labelledby="transactions-heading">
      <h2 id="transactions-heading">Transactions</h2>
      <PagedTable
        list={list}
        what="transactions"
        empty="No transactions yet."
        columns={['Created', 'Type', 'Amount', 'Fee', 'Net', 'Status', 'Available on']}
        label="Transactions"
        row={(t) => (
          <tr key={t.id} data-transaction={t.id}>
            <td>{formatTime(t.created)}</td>
            <td>{t.type}</td>
            <td>{money({ amount: t.amount, currency: t.currency })}</td>
            <td>{money({ amount: t.fee, currency: t.currency })}</td>
            <td>{money({ amount: t.net, currency: t.currency })}</td>
            <td>
              <Status value={t.status} />
            </td>
            <td>{formatTime(t.available_on)}</td>
          </tr>
        )}
      />
    </section>
  );
}
