import type { ErrorDetail } from '@platform/shared/errors';
import { PROGRAMME_SLUG, type ApplicationBody } from '@platform/shared/schemas/programme';

/**
 * The application form's fields as a browser posts them, checked before anything is counted or sent: each problem
 * under the field's name, so the page can show it beside the field. The affiliates service checks the body again.
 */
export type Fields = Record<string, string>;

const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;
/**
 * Control characters (NUL, line breaks, escape…) and the Unicode line and paragraph separators. The name is put in
 * mails and on the merchant's pages, where a line break lets an applicant write a paragraph of their own into a mail
 * to whatever address they typed; Postgres refuses NUL in text outright, which was a 500.
 */
const CONTROL = /[\p{Cc}\u2028\u2029]/u;
/** The promotion is several lines of plain text: tabs and line breaks are its own, other control characters not. */
const CONTROL_BUT_LINES = /(?![\t\n\r])\p{Cc}/u;
/** The name's longest: a person's or a business's name, and a bound on what it adds to a mail. */
const NAME_MAX = 100;
const SLUG = new RegExp(PROGRAMME_SLUG);

/** A website as typed: "example.com" is taken as https://example.com. */
function website(value: string): string | undefined {
  const typed = /^[a-z][a-z0-9+.-]*:/i.test(value) ? value : `https://${value}`;
  try {
    const url = new URL(typed);
    if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !url.hostname.includes('.')) return undefined;
    return url.href.length <= 2048 ? url.href : undefined;
  } catch {
    return undefined;
  }
}

export function readFields(raw: unknown): Fields {
  const fields: Fields = {};
  if (raw && typeof raw === 'object')
    for (const name of ['name', 'email', 'website', 'promotion', 'terms', 'ref']) {
      const v = (raw as Record<string, unknown>)[name];
      if (typeof v === 'string') fields[name] = v;
    }
  return fields;
}

export function checkApplication(
  fields: Fields,
): { ok: true; body: ApplicationBody } | { ok: false; errors: ErrorDetail[] } {
  const errors: ErrorDetail[] = [];
  const name = (fields['name'] ?? '').trim();
  const email = (fields['email'] ?? '').trim();
  const site = (fields['website'] ?? '').trim();
  const promotion = (fields['promotion'] ?? '').trim();
  if (!name) errors.push({ path: 'name', message: 'is required' });
  else if (name.length > NAME_MAX) errors.push({ path: 'name', message: `must be at most ${NAME_MAX} characters` });
  else if (CONTROL.test(name)) errors.push({ path: 'name', message: 'must be one line, without control characters' });
  if (!EMAIL.test(email) || email.length > 254 || CONTROL.test(email))
    errors.push({ path: 'email', message: 'must be an e-mail address' });
  const url = site ? website(site) : undefined;
  if (!url) errors.push({ path: 'website', message: 'must be a web address, such as https://example.com' });
  if (!promotion) errors.push({ path: 'promotion', message: 'is required' });
  else if (promotion.length > 2000) errors.push({ path: 'promotion', message: 'must be at most 2000 characters' });
  else if (CONTROL_BUT_LINES.test(promotion))
    errors.push({ path: 'promotion', message: 'must be plain text, without control characters' });
  if (!fields['terms']) errors.push({ path: 'terms', message: 'must be accepted to apply' });
  if (errors.length) return { ok: false, errors };
  const ref = (fields['ref'] ?? '').trim().toLowerCase();
  return {
    ok: true,
    body: { name, email, website: url!, promotion, ...(SLUG.test(ref) ? { ref } : {}) },
  };
}
