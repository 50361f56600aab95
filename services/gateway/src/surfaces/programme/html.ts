import type { ErrorDetail } from '@platform/shared/errors';
import { escapeHtml as escape, type Page } from '../../http/page-shell.ts';
import type { Fields } from './form.ts';
import type { PublicProgramme } from './queries/programmes.ts';
import { commissionTerms } from '../../http/commission-terms.ts';

/**
 * The programme page's content, in the gateway's one page shell (http/page-shell.ts): rendered on the server, no
 * script, every value the merchant or the applicant typed escaped.
 */
const STYLE = `
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1c2330; }
  main { max-width: 40rem; margin: 2rem auto; background: #fff; padding: 2rem; border-radius: 8px;
         box-shadow: 0 1px 3px rgba(0, 0, 0, .12); }
  h1 { font-size: 1.6rem; margin-top: 0; }
  .description { white-space: pre-line; }
  label { display: block; margin: .8rem 0 .2rem; font-weight: 500; }
  label.check { display: flex; gap: .5rem; align-items: baseline; font-weight: 400; }
  input[type=text], input[type=email], textarea { width: 100%; box-sizing: border-box; padding: .45rem .5rem;
         font: inherit; border: 1px solid #b8bfcc; border-radius: 4px; }
  textarea { min-height: 6rem; }
  .error { color: #b71c1c; font-size: .9rem; margin: .2rem 0 0; }
  .errors { border: 1px solid #c62828; background: #fdecea; padding: .5rem 1rem; border-radius: 6px; }
  a { color: #1d4ed8; }
  button { font: inherit; margin-top: 1.2rem; padding: .6rem 1.6rem; border: 0; border-radius: 4px;
           background: #1d4ed8; color: #fff; }`;

const page = (title: string, body: string): Page => ({ title, style: STYLE, body });

export function messagePage(title: string, message: string): Page {
  return page(title, `<h1>${escape(title)}</h1>\n<p>${escape(message)}</p>`);
}

export const notFoundPage = () =>
  messagePage('Programme not found', 'There is no affiliate programme at this address. Check the link you were given.');

export function thanksPage(programme: PublicProgramme): Page {
  return page(
    'Thank you',
    `<h1>Thank you for applying</h1>
<p>${escape(programme.name)} has your application. We have sent a note to the address you gave; you will hear from us there.</p>`,
  );
}

const LABELS: Record<string, string> = {
  name: 'Name',
  email: 'E-mail',
  website: 'Website',
  promotion: 'How will you promote us?',
  terms: 'The terms',
};

const fieldErrors = (errors: ErrorDetail[], name: string) =>
  errors
    .filter((e) => e.path === name || e.path.startsWith(`${name}.`))
    .map((e) => `<p class="error" id="${name}-error">${escape(LABELS[name] ?? name)} ${escape(e.message)}</p>`)
    .join('');

function input(name: string, type: string, fields: Fields, errors: ErrorDetail[], autocomplete: string): string {
  const invalid = errors.some((e) => e.path === name);
  return `<label for="${name}">${escape(LABELS[name]!)}</label>
<input type="${type}" id="${name}" name="${name}" required autocomplete="${autocomplete}" value="${escape(fields[name] ?? '')}"${invalid ? ` aria-invalid="true" aria-describedby="${name}-error"` : ''}>
${fieldErrors(errors, name)}`;
}

/** The page: the programme, its terms, and the form (again, with its problems, after a refused submission). */
export function programmePage(
  programme: PublicProgramme,
  slug: string,
  fields: Fields,
  errors: ErrorDetail[] = [],
): Page {
  const terms = commissionTerms(programme.settings, programme.tiers)
    .map((line) => `<li>${escape(line)}</li>`)
    .join('\n');
  const termsLink = programme.termsUrl
    ? `<a href="${escape(programme.termsUrl)}" rel="noopener noreferrer" target="_blank">programme terms</a>`
    : 'programme terms';
  const summary = errors.length ? `<div class="errors" role="alert"><p>Please correct the fields below.</p></div>` : '';
  const ref = fields['ref'] ? `<input type="hidden" name="ref" value="${escape(fields['ref'])}">` : '';
  return page(
    `${programme.name} affiliate programme`,
    `<h1>${escape(programme.name)} affiliate programme</h1>
${programme.description ? `<p class="description">${escape(programme.description)}</p>` : ''}
<section aria-labelledby="terms-heading">
<h2 id="terms-heading">What you earn</h2>
<ul>
${terms}
</ul>
<p>Commissions are in ${escape(programme.settings.currency)}.</p>
</section>
<section aria-labelledby="apply-heading">
<h2 id="apply-heading">Apply</h2>
${summary}
<form method="post" action="/p/${escape(slug)}" novalidate>
${ref}
${input('name', 'text', fields, errors, 'name')}
${input('email', 'email', fields, errors, 'email')}
${input('website', 'text', fields, errors, 'url')}
<label for="promotion">${escape(LABELS['promotion']!)}</label>
<textarea id="promotion" name="promotion" required maxlength="2000"${errors.some((e) => e.path === 'promotion') ? ' aria-invalid="true" aria-describedby="promotion-error"' : ''}>${escape(fields['promotion'] ?? '')}</textarea>
${fieldErrors(errors, 'promotion')}
<label class="check" for="terms"><input type="checkbox" id="terms" name="terms" value="accepted" required${fields['terms'] ? ' checked' : ''}> <span>I accept the ${termsLink}</span></label>
${fieldErrors(errors, 'terms')}
<button type="submit">Apply</button>
</form>
</section>`,
  );
}
