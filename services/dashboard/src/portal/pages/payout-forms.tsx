import type { ComponentChildren } from 'preact';
import { useForm } from '../../hooks.ts';
import { ErrorText, Field } from '../../ui.tsx';
import { portal, type MaskedDetails } from '../api.ts';
import { payoutDetailsBody, taxFormBody } from '../bodies.ts';

/**
 * The payout-details form and the tax-form form of Payout settings: the onboarding page's fields under its names and
 * labels (gateway/onboarding/html.ts), turned into the API's bodies as that page's are (../bodies.ts), so that the two
 * pages ask the same and the API's checks, the one validation, name the same fields.
 */
type Bind = ReturnType<typeof useForm<Record<string, string>, unknown>>;

/** The API's path of a field (address.city) for a flat field name (address_city), as the form's errors are keyed. */
const apiPath = (name: string) => (name.startsWith('address_') ? `address.${name.slice(8)}` : name);

function Input(props: {
  form: Bind;
  name: string;
  label: string;
  type?: 'text' | 'email' | 'date';
  hint?: string;
  autoComplete?: string;
  required?: boolean;
}) {
  const attrs = {
    name: props.name,
    autoComplete: props.autoComplete ?? 'off',
    required: props.required,
    maxLength: 200,
    ...props.form.bind(props.name),
  };
  return (
    <Field label={props.label} hint={props.hint} error={props.form.fieldError(apiPath(props.name))}>
      {props.type === 'date' ? (
        <input type="date" {...attrs} />
      ) : props.type === 'email' ? (
        <input type="email" {...attrs} />
      ) : (
        <input type="text" {...attrs} />
      )}
    </Field>
  );
}

const Select = (props: { form: Bind; name: string; label: string; options: [string, string][] }) => (
  <Field label={props.label} error={props.form.fieldError(apiPath(props.name))}>
    <select name={props.name} {...props.form.bind(props.name)}>
      {props.options.map(([v, text]) => (
        <option key={v} value={v}>
          {text}
        </option>
      ))}
    </select>
  </Field>
);

const Submit = (props: { form: Bind; children: ComponentChildren }) => (
  <>
    <ErrorText error={props.form.error} />
    <button type="submit" class="primary" disabled={props.form.pending}>
      {props.children}
    </button>
  </>
);

const PAYOUT_FIELDS = { method: 'paypal', paypal_email: '', iban: '', routing_number: '', account_number: '' };

/** New payout details (PayPal, or a bank account by IBAN or US routing and account numbers). */
export function PayoutDetailsForm(props: { onSaved: (d: MaskedDetails) => void }) {
  const form = useForm<Record<string, string>, MaskedDetails>(
    PAYOUT_FIELDS,
    async (v) => portal<MaskedDetails>('PUT', '/payout-details', payoutDetailsBody(v)),
    props.onSaved,
  );
  const paypal = form.values['method'] === 'paypal';
  return (
    <form class="portal-form" aria-labelledby="details-form-heading" onSubmit={form.onSubmit}>
      <h3 id="details-form-heading">New payout details</h3>
      <Select
        form={form}
        name="method"
        label="Paid by"
        options={[
          ['paypal', 'PayPal'],
          ['bank', 'Bank transfer'],
        ]}
      />
      {paypal ? (
        <Input form={form} name="paypal_email" label="PayPal e-mail" type="email" required />
      ) : (
        <>
          <Input form={form} name="iban" label="IBAN" />
          <Input form={form} name="routing_number" label="Or: US routing number" />
          <Input form={form} name="account_number" label="and account number" />
        </>
      )}
      <Submit form={form}>Save payout details</Submit>
    </form>
  );
}

const TAX_FIELDS: Record<string, string> = {
  form_type: 'W-9',
  legal_name: '',
  signature_name: '',
  signed_on: new Date().toISOString().slice(0, 10),
  address_line1: '',
  address_line2: '',
  address_city: '',
  address_region: '',
  address_postal_code: '',
  address_country: 'US',
  business_name: '',
  tax_classification: 'individual',
  tin_type: 'ssn',
  tin: '',
  country: '',
  foreign_tin: '',
  foreign_tin_not_required_reason: '',
  treaty_country: '',
};

const CLASSIFICATIONS: [string, string][] = [
  ['individual', 'Individual'],
  ['sole_proprietor', 'Sole proprietor'],
  ['c_corporation', 'C corporation'],
  ['s_corporation', 'S corporation'],
  ['partnership', 'Partnership'],
  ['trust_estate', 'Trust or estate'],
  ['llc', 'LLC'],
];

/** A new tax form: W-9 for US persons, W-8BEN or W-8BEN-E otherwise; the fields of the chosen form only. */
export function TaxFormForm(props: { onSaved: () => void }) {
  const form = useForm<Record<string, string>, unknown>(
    TAX_FIELDS,
    async (v) => portal('POST', '/tax-forms', taxFormBody(v)),
    props.onSaved,
  );
  const w9 = form.values['form_type'] === 'W-9';
  return (
    <form class="portal-form" aria-labelledby="tax-form-heading" onSubmit={form.onSubmit}>
      <h3 id="tax-form-heading">New tax form</h3>
      <Select
        form={form}
        name="form_type"
        label="Form"
        options={[
          ['W-9', 'W-9 (US person)'],
          ['W-8BEN', 'W-8BEN (foreign individual)'],
          ['W-8BEN-E', 'W-8BEN-E (foreign entity)'],
        ]}
      />
      <Input form={form} name="legal_name" label="Legal name" autoComplete="name" required />
      <Input form={form} name="signature_name" label="Signature (type your name)" required />
      <Input form={form} name="signed_on" label="Signed on" type="date" required />
      <fieldset>
        <legend>Address</legend>
        <Input form={form} name="address_line1" label="Street and number" autoComplete="address-line1" />
        <Input form={form} name="address_line2" label="Apartment, suite (optional)" autoComplete="address-line2" />
        <Input form={form} name="address_city" label="City" autoComplete="address-level2" />
        <Input form={form} name="address_region" label="State or region" autoComplete="address-level1" />
        <Input form={form} name="address_postal_code" label="Postal code" autoComplete="postal-code" />
        <Input form={form} name="address_country" label="Country (two letters, e.g. US, DE)" hint="US for a W-9" />
      </fieldset>
      {w9 ? (
        <fieldset>
          <legend>W-9</legend>
          <Input form={form} name="business_name" label="Business name (optional)" />
          <Select form={form} name="tax_classification" label="Tax classification" options={CLASSIFICATIONS} />
          <Select
            form={form}
            name="tin_type"
            label="TIN type"
            options={[
              ['ssn', 'SSN'],
              ['ein', 'EIN'],
            ]}
          />
          <Input form={form} name="tin" label="TIN" hint="123-45-6789 (SSN) or 12-3456789 (EIN)" />
        </fieldset>
      ) : (
        <fieldset>
          <legend>{form.values['form_type']}</legend>
          <Input
            form={form}
            name="country"
            label="Country of citizenship (W-8BEN) or incorporation (W-8BEN-E), two letters"
          />
          <Input form={form} name="foreign_tin" label="Foreign TIN" />
          <Input form={form} name="foreign_tin_not_required_reason" label="Or: why no foreign TIN is required" />
          <Input form={form} name="treaty_country" label="Treaty country (optional, two letters)" />
        </fieldset>
      )}
      <Submit form={form}>Submit tax form</Submit>
    </form>
  );
}
