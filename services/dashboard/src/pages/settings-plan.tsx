import { useState } from 'preact/hooks';
import { dash, unwrap, type DashboardSchema, type Session } from '../api.ts';
import { useForm, useLoad } from '../hooks.ts';
import { Empty, ErrorText, Field, formatMoney, formatTime, Link, Loaded, Page, Table } from '../ui.tsx';
import { CardInputs, UpdateCard } from './settings-card.tsx';

type Billing = DashboardSchema['DashboardBilling'];
type PlanView = Billing['plans'][number];
type PlanId = Billing['plan'];
type Receipt = DashboardSchema['DashboardReceipt'];

const money = (m: { amount: string; currency: string }) => formatMoney(Number(m.amount), m.currency.toUpperCase());

const priceOf = (p: PlanView) => (p.price ? `${money(p.price)} a month` : 'Contact us');

const apiOf = (p: PlanView) =>
  !p.api_keys || !p.rate_limit_per_min
    ? 'No API keys'
    : p.custom_rate_limits
      ? `API keys, up to ${p.rate_limit_per_min.max.toLocaleString('en-US')} requests a minute each`
      : `API keys, ${p.rate_limit_per_min.default} requests a minute each`;

/** A fresh key for one upgrade attempt: sent again with a retry, so that the attempt is charged once at most. */
const newAttempt = () => crypto.randomUUID();

/**
 * Settings › Plan: the plans with their prices and limits (the catalogue the gateway's plan checks read), the current
 * plan, an upgrade paid with a card (or, without a payment processor, asked of the operator) and the receipts.
 */
export function PlanPage(props: { session: Session }) {
  const [round, setRound] = useState(0);
  const [message, setMessage] = useState<string>();
  const billing = useLoad(async () => unwrap(await dash.GET('/dashboard/api/billing')), [round]);
  if (!props.session.user.permissions.includes('billing'))
    return (
      <Page title="Plan">
        <p class="notice">Your role ({props.session.user.role}) does not see billing; an owner or admin does.</p>
      </Page>
    );
  return (
    <Page title="Plan" actions={<Link to="/settings">Settings</Link>}>
      <Loaded state={billing} what="the plans">
        {(b) => (
          <>
            <Plans billing={b} />
            {b.status === 'past_due' ? (
              <p class="notice" role="alert">
                Your last renewal was declined ({formatTime(b.past_due_since)}). We try again each day; after 7 days the
                account moves to Free. Upgrading with another card pays a new month.
              </p>
            ) : null}
            {b.status === 'past_due' && b.payments === 'sandbox' ? (
              <UpdateCard
                billing={b}
                onDone={(said) => {
                  setMessage(said);
                  setRound((r) => r + 1);
                }}
              />
            ) : null}
            {b.requested ? (
              <p class="notice" role="status">
                Your upgrade to {nameOf(b, b.requested.plan)} is waiting for the platform’s operator to approve it
                (asked {formatTime(b.requested.requested_at)}).
              </p>
            ) : (
              <Upgrade
                key={b.plan}
                billing={b}
                onDone={(said) => {
                  setMessage(said);
                  setRound((r) => r + 1);
                }}
              />
            )}
            {message ? <p role="status">{message}</p> : null}
            <Downgrade billing={b} onDone={() => setRound((r) => r + 1)} />
            <Receipts receipts={b.receipts} />
          </>
        )}
      </Loaded>
    </Page>
  );
}

const nameOf = (b: Billing, id: PlanId) => b.plans.find((p) => p.id === id)?.name ?? id;

function Plans(props: { billing: Billing }) {
  const b = props.billing;
  return (
    <section aria-labelledby="plans-heading">
      <h2 id="plans-heading">Plans</h2>
      <p>
        You are on <strong>{nameOf(b, b.plan)}</strong>
        {b.period_end ? `, paid until ${formatTime(b.period_end)}` : null}
        {b.card ? ` (card ${b.card.brand} •••• ${b.card.last4})` : null}.
      </p>
      <Table
        columns={['Plan', 'Price', 'API']}
        caption="Plans with their prices and limits"
        rows={b.plans}
        row={(p) => (
          <tr key={p.id} aria-current={p.id === b.plan ? 'true' : undefined}>
            <th scope="row">
              {p.name}
              {p.id === b.plan ? <span class="muted"> (current)</span> : null}
            </th>
            <td>{priceOf(p)}</td>
            <td>{apiOf(p)}</td>
          </tr>
        )}
      />
    </section>
  );
}

function Upgrade(props: { billing: Billing; onDone: (message: string) => void }) {
  const b = props.billing;
  const rank = b.plans.findIndex((p) => p.id === b.plan);
  const higher = b.plans.slice(rank + 1).filter((p) => p.price !== null);
  const approval = b.payments === 'approval';
  // One attempt key until the attempt has an outcome: a retry after an error that left it open is the same attempt.
  const [attempt, setAttempt] = useState(newAttempt);
  const form = useForm(
    { plan: higher[0]?.id ?? '', number: '', expiry: '', cvc: '' },
    async (v) => {
      const card = v.number.trim()
        ? { number: v.number.trim(), expiry: v.expiry.trim(), cvc: v.cvc.trim() }
        : undefined;
      try {
        return unwrap(
          await dash.POST('/dashboard/api/billing/upgrade', { body: { plan: v.plan as PlanId, attempt, card } }),
        );
      } catch (err) {
        // A refusal (a declined card) ends the attempt: the next submit is a new one. A conflict may still finish.
        if (!/in progress|being paid/.test((err as Error).message)) setAttempt(newAttempt());
        throw err;
      }
    },
    (result) => {
      setAttempt(newAttempt());
      props.onDone(
        result.status === 'succeeded'
          ? `Upgraded to ${nameOf(b, result.plan)}: ${result.receipt ? money(result.receipt.amount) : 'nothing'} paid.`
          : 'Upgrade requested: the platform’s operator approves it.',
      );
    },
  );
  if (higher.length === 0) return <Empty>You are on the highest plan sold here; for Enterprise, contact us.</Empty>;
  return (
    <section aria-labelledby="upgrade-heading">
      <h2 id="upgrade-heading">Upgrade</h2>
      {approval ? (
        <p class="notice">
          Live payments have no payment processor here yet: an upgrade is a request the platform’s operator approves,
          and the new plan applies once approved.
        </p>
      ) : (
        <p class="muted">
          The new plan applies at once. You pay the difference for what is left of the month you have paid for (a whole
          month from Free). Test cards: 4242 4242 4242 4242 is charged, 4000 0000 0000 0002 is declined.
        </p>
      )}
      <form onSubmit={form.onSubmit}>
        <div class="inline-form">
          <Field label="New plan" error={form.fieldError('plan')}>
            <select {...form.bind('plan')}>
              {higher.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name} ({priceOf(p)})
                </option>
              ))}
            </select>
          </Field>
          {approval ? null : (
            <CardInputs
              bind={form.bind}
              fieldError={form.fieldError}
              saved={b.card}
              numberGiven={form.values.number !== ''}
            />
          )}
        </div>
        <button type="submit" class="primary" disabled={form.pending}>
          {approval ? 'Request upgrade' : 'Upgrade'}
        </button>
        <ErrorText error={form.error} />
      </form>
    </section>
  );
}

function Downgrade(props: { billing: Billing; onDone: () => void }) {
  const b = props.billing;
  const rank = b.plans.findIndex((p) => p.id === b.plan);
  const lower = b.plans.slice(0, rank);
  const form = useForm(
    { plan: b.downgrade_to ?? lower[lower.length - 1]?.id ?? b.plan },
    async (v) => unwrap(await dash.POST('/dashboard/api/billing/downgrade', { body: { plan: v.plan } })),
    props.onDone,
    { keep: true },
  );
  if (lower.length === 0) return null;
  return (
    <section aria-labelledby="downgrade-heading">
      <h2 id="downgrade-heading">Downgrade</h2>
      <p class="muted">
        {b.downgrade_to
          ? `${nameOf(b, b.downgrade_to)} applies when the month you paid for ends (${formatTime(b.period_end)}).`
          : b.period_end
            ? 'A lower plan applies when the month you paid for ends; until then you keep what you paid for.'
            : 'Nothing is paid for: a lower plan applies at once.'}
      </p>
      <form onSubmit={form.onSubmit}>
        <div class="inline-form">
          <Field label="Plan after this month" error={form.fieldError('plan')}>
            <select {...form.bind('plan')}>
              {[...lower, b.plans[rank]!].map((p) => (
                <option key={p.id} value={p.id}>
                  {p.id === b.plan ? `Keep ${p.name}` : p.name}
                </option>
              ))}
            </select>
          </Field>
          <button type="submit" disabled={form.pending}>
            Save
          </button>
        </div>
        <ErrorText error={form.error} />
      </form>
    </section>
  );
}

function Receipts(props: { receipts: Receipt[] }) {
  return (
    <section aria-labelledby="receipts-heading">
      <h2 id="receipts-heading">Receipts</h2>
      {props.receipts.length === 0 ? (
        <Empty>No payments yet.</Empty>
      ) : (
        <Table
          columns={['Date', 'Change', 'Amount', 'Card', 'Payment']}
          rows={props.receipts}
          row={(r) => (
            <tr key={r.id}>
              <td>{formatTime(r.created_at)}</td>
              <td>{r.kind === 'renewal' ? `${r.to_plan}, a month renewed` : `${r.from_plan} → ${r.to_plan}`}</td>
              <td>{money(r.amount)}</td>
              <td>{r.card ?? '—'}</td>
              <td>
                <code>{r.payment_intent ?? '—'}</code>
              </td>
            </tr>
          )}
        />
      )}
    </section>
  );
}
