import { escapeHtml as escape, type Page } from '../../http/page-shell.ts';
import type { ErrorDetail } from '@platform/shared/errors';
import type { MaskedPayoutDetails, OnboardingState, TaxForm } from '@platform/shared/schemas/tax-forms';

/**
 * The onboarding page's content, in the gateway's one page shell (http/page-shell.ts): rendered on the server, no
 * script, its stylesheet under the answer's nonce. Every value shown is escaped; no secret is ever written back
 * into the page, not even one the affiliate just typed (a refused form asks for the TIN and account numbers again).
 */

const STYLE = `
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1c2330; }
  main { max-width: 44rem; margin: 2rem auto; background: #fff; padding: 2rem; border-radius: 8px;
         box-shadow: 0 1px 3px rgba(0, 0, 0, .12); }
  h1 { font-size: 1.5rem; margin-top: 0; }
  fieldset { border: 1px solid #d5d9e0; border-radius: 6px; margin: 0 0 1.25rem; padding: .75rem 1rem 1rem; }
  legend { font-weight: 600; padding: 0 .25rem; }
  label { display: block; margin: .6rem 0 .2rem; font-weight: 500; }
  input, select { width: 100%; box-sizing: border-box; padding: .45rem .5rem; font: inherit;
                  border: 1px solid #b8bfcc; border-radius: 4px; }
  .hint { color: #566074; font-size: .9rem; margin: .25rem 0 0; }
  .errors { border: 1px solid #c62828; background: #fdecea; padding: .5rem 1rem; border-radius: 6px; }
  .on-file { background: #eef6ee; border: 1px solid #9ccc9c; padding: .5rem 1rem; border-radius: 6px; }
  button { font: inherit; padding: .6rem 1.4rem; border: 0; border-radius: 4px; background: #1d4ed8; color: #fff; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
  dt { font-weight: 500; }
  dd { margin: 0; }`;

const page = (title: string, body: string): Page => ({ title, style: STYLE, body });

/** A page without a form: the link cannot be used (unknown, expired, used) or the platform cannot answer now. */
export function messagePage(title: string, message: string): Page {
  return page(title, `<h1>${escape(title)}</h1>\n<p>${escape(message)}</p>`);
}

function taxFormOnFile(form: TaxForm | null): string {
  if (!form) return '<p>No tax form on file.</p>';
  return `<dl>
<dt>Tax form</dt><dd>${escape(form.form_type)} (${escape(form.status)})</dd>
<dt>Name</dt><dd>${escape(form.legal_name)}</dd>
<dt>TIN</dt><dd>${form.tin_masked ? escape(form.tin_masked) : 'none given'}</dd>
<dt>Signed on</dt><dd>${escape(form.signed_on)}</dd>
</dl>`;
}

function payoutDetailsOnFile(details: MaskedPayoutDetails | null): string {
  if (!details) return '<p>No payout details on file.</p>';
  const rows = Object.entries(details)
    .filter(([k]) => k !== 'updated_at')
    .map(([k, v]) => `<dt>${escape(k.replaceAll('_', ' '))}</dt><dd>${escape(String(v))}</dd>`);
  return `<dl>\n${rows.join('\n')}\n</dl>`;
}

/** What is on file, masked: shown above the form and after a submission. */
export function onFile(state: OnboardingState): string {
  return `<section class="on-file" aria-label="On file">
<h2>On file</h2>
${taxFormOnFile(state.tax_form)}
${payoutDetailsOnFile(state.payout_details)}
</section>`;
}

export function submittedPage(state: OnboardingState): Page {
  return page(
    'Thank you',
    `<h1>Thank you, ${escape(state.affiliate_name)}</h1>
<p>${escape(state.merchant_name)} has your tax form and payout details. This link has now been used.</p>
${onFile(state)}`,
  );
}

/** The fields a refused submission fills back in: never the TIN, the foreign TIN or an account's numbers. */
export type Refill = Record<string, string>;

const field = (
  name: string,
  label: string,
  refill: Refill,
  opts: { type?: string; hint?: string; autocomplete?: string; secret?: boolean } = {},
) => `<label for="${name}">${escape(label)}</label>
<input id="${name}" name="${name}" type="${opts.type ?? 'text'}"${
  opts.secret ? ' autocomplete="off"' : ` value="${escape(refill[name] ?? '')}"`
}${opts.autocomplete ? ` autocomplete="${opts.autocomplete}"` : ''}>${
  opts.hint ? `\n<p class="hint">${escape(opts.hint)}</p>` : ''
}`;

const select = (name: string, label: string, options: [string, string][], refill: Refill) =>
  `<label for="${name}">${escape(label)}</label>
<select id="${name}" name="${name}">${options
    .map(([v, text]) => `<option value="${v}"${refill[name] === v ? ' selected' : ''}>${escape(text)}</option>`)
    .join('')}</select>`;

const CLASSIFICATIONS: [string, string][] = [
  ['individual', 'Individual'],
  ['sole_proprietor', 'Sole proprietor'],
  ['c_corporation', 'C corporation'],
  ['s_corporation', 'S corporation'],
  ['partnership', 'Partnership'],
  ['trust_estate', 'Trust or estate'],
  ['llc', 'LLC'],
];

export function formPage(
  state: OnboardingState,
  action: string,
  errors: ErrorDetail[] = [],
  refill: Refill = {},
): Page {
  const problems = errors.length
    ? `<section class="errors" role="alert"><h2>Please check these fields</h2><ul>${errors
        .map((e) => `<li><strong>${escape(e.path)}</strong> ${escape(e.message)}</li>`)
        .join('')}</ul></section>`
    : '';
  return page(
    `Tax form and payout details for ${state.merchant_name}`,
    `<h1>Tax form and payout details</h1>
<p>Hello ${escape(state.affiliate_name)}: ${escape(state.merchant_name)} needs a tax form and payout details to pay
your commissions. This link works once, until ${escape(state.expires_at.slice(0, 16).replace('T', ' '))} UTC.</p>
${onFile(state)}
${problems}
<form method="post" action="${escape(action)}">
<fieldset><legend>Tax form</legend>
${select(
  'form_type',
  'Form',
  [
    ['W-9', 'W-9 (US person)'],
    ['W-8BEN', 'W-8BEN (foreign individual)'],
    ['W-8BEN-E', 'W-8BEN-E (foreign entity)'],
  ],
  refill,
)}
${field('legal_name', 'Legal name', refill, { autocomplete: 'name' })}
${field('signature_name', 'Signature (type your name)', refill)}
${field('signed_on', 'Signed on', refill, { type: 'date' })}
</fieldset>
<fieldset><legend>Address</legend>
${field('address_line1', 'Street and number', refill, { autocomplete: 'address-line1' })}
${field('address_line2', 'Apartment, suite (optional)', refill, { autocomplete: 'address-line2' })}
${field('address_city', 'City', refill, { autocomplete: 'address-level2' })}
${field('address_region', 'State or region', refill, { autocomplete: 'address-level1' })}
${field('address_postal_code', 'Postal code', refill, { autocomplete: 'postal-code' })}
${field('address_country', 'Country (two letters, e.g. US, DE)', refill, { hint: 'US for a W-9' })}
</fieldset>
<fieldset><legend>W-9 only</legend>
${field('business_name', 'Business name (optional)', refill)}
${select('tax_classification', 'Tax classification', CLASSIFICATIONS, refill)}
${select(
  'tin_type',
  'TIN type',
  [
    ['ssn', 'SSN'],
    ['ein', 'EIN'],
  ],
  refill,
)}
${field('tin', 'TIN', refill, { secret: true, hint: '123-45-6789 (SSN) or 12-3456789 (EIN)' })}
</fieldset>
<fieldset><legend>W-8BEN and W-8BEN-E only</legend>
${field('country', 'Country of citizenship (W-8BEN) or incorporation (W-8BEN-E), two letters', refill)}
${field('foreign_tin', 'Foreign TIN', refill, { secret: true })}
${field('foreign_tin_not_required_reason', 'Or: why no foreign TIN is required', refill)}
${field('treaty_country', 'Treaty country (optional, two letters)', refill)}
</fieldset>
<fieldset><legend>Payout details</legend>
${select(
  'method',
  'Paid by',
  [
    ['paypal', 'PayPal'],
    ['bank', 'Bank transfer'],
  ],
  refill,
)}
${field('paypal_email', 'PayPal e-mail', refill, { type: 'email', secret: true })}
${field('iban', 'IBAN', refill, { secret: true })}
${field('routing_number', 'Or: US routing number', refill, { secret: true })}
${field('account_number', 'and account number', refill, { secret: true })}
</fieldset>
<button type="submit">Submit</button>
</form>`,
  );
}
