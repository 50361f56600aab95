import { dash, unwrap, type DashboardSchema } from '../api.ts';
import { useForm } from '../hooks.ts';
import { ErrorText, Field } from '../ui.tsx';

type Billing = DashboardSchema['DashboardBilling'];

/** A form's card inputs, bound to its `number`, `expiry` and `cvc` values; optional while a saved card would do. */
export function CardInputs(props: {
  bind: (name: 'number' | 'expiry' | 'cvc') => { value: string; onInput: (e: Event) => void };
  fieldError: (path: string) => string | undefined;
  saved: Billing['card'];
  numberGiven: boolean;
}) {
  const { saved } = props;
  return (
    <>
      <Field
        label="Card number"
        hint={saved ? `leave empty to pay with ${saved.brand} •••• ${saved.last4}` : undefined}
        error={props.fieldError('card.number')}
      >
        <input
          type="text"
          inputMode="numeric"
          autoComplete="cc-number"
          required={!saved}
          size={22}
          {...props.bind('number')}
        />
      </Field>
      <Field label="Expiry (MM/YY)" error={props.fieldError('card.expiry')}>
        <input
          type="text"
          autoComplete="cc-exp"
          size={6}
          required={!saved || props.numberGiven}
          {...props.bind('expiry')}
        />
      </Field>
      <Field label="CVC" error={props.fieldError('card.cvc')}>
        <input
          type="text"
          inputMode="numeric"
          autoComplete="cc-csc"
          size={5}
          required={!saved || props.numberGiven}
          {...props.bind('cvc')}
        />
      </Field>
    </>
  );
}

/**
 * Past due: a new card for renewals, on which the unpaid month is tried at once (the gateway tries it this way once a
 * day; the daily retry goes on besides).
 */
export function UpdateCard(props: { billing: Billing; onDone: (said: string) => void }) {
  const form = useForm(
    { number: '', expiry: '', cvc: '' },
    async (v) =>
      unwrap(
        await dash.POST('/dashboard/api/billing/card', {
          body: { card: { number: v.number.trim(), expiry: v.expiry.trim(), cvc: v.cvc.trim() } },
        }),
      ),
    (result) =>
      props.onDone(
        result.status === 'active'
          ? `The unpaid month was paid with ${result.card.brand} •••• ${result.card.last4}.`
          : `${result.card.brand} •••• ${result.card.last4} is saved; the unpaid month is tried on it again tomorrow.`,
      ),
  );
  return (
    <section aria-labelledby="card-heading">
      <h2 id="card-heading">Update your card</h2>
      <form onSubmit={form.onSubmit}>
        <div class="inline-form">
          <CardInputs bind={form.bind} fieldError={form.fieldError} saved={null} numberGiven />
        </div>
        <button type="submit" class="primary" disabled={form.pending}>
          Save card and pay
        </button>
        <ErrorText error={form.error} />
      </form>
    </section>
  );
}
