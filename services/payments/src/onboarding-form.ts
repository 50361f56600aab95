/**
 * The hosted onboarding form's rules, without I/O: what each field must be, and the problems to show beside them.
 * The bank account number is never echoed back into the page.
 */
export interface OnboardingDetails {
  business_name: string;
  business_url: string | null;
  product_description: string;
  account_holder_name: string;
  routing_number: string;
  account_number: string;
}

export const ONBOARDING_FIELDS = [
  'business_name',
  'business_url',
  'product_description',
  'account_holder_name',
  'routing_number',
  'account_number',
  'tos',
] as const;

export function checkOnboardingForm(
  form: Record<string, string>,
): { details: OnboardingDetails } | { problems: Record<string, string>; values: Record<string, string> } {
  const value = (name: string) => (form[name] ?? '').trim();
  const problems: Record<string, string> = {};
  const text = (name: string, max: number, what: string) => {
    const v = value(name);
    if (!v) problems[name] = `Enter ${what}.`;
    else if (v.length > max) problems[name] = `Use at most ${max} characters.`;
    return v;
  };
  const business_name = text('business_name', 200, 'the business name');
  const product_description = text('product_description', 500, 'what the business sells');
  const account_holder_name = text('account_holder_name', 200, "the account holder's name");
  const url = value('business_url');
  if (url && !/^https?:\/\/[^\s/$.?#][^\s]*$/i.test(url))
    problems['business_url'] = 'Enter a web address that starts with https://.';
  if (url.length > 2048) problems['business_url'] = 'Use at most 2048 characters.';
  const routing_number = value('routing_number');
  if (!/^\d{9}$/.test(routing_number)) problems['routing_number'] = 'Enter the 9-digit routing number.';
  const account_number = value('account_number').replace(/[\s-]/g, '');
  if (!/^\d{4,17}$/.test(account_number)) problems['account_number'] = 'Enter the account number: 4 to 17 digits.';
  if (value('tos') !== 'accepted') problems['tos'] = 'Accept the services agreement to continue.';
  if (Object.keys(problems).length > 0) {
    const values = Object.fromEntries(
      ONBOARDING_FIELDS.filter((f) => f !== 'account_number').map((f) => [f, value(f)]),
    );
    return { problems, values };
  }
  return {
    details: {
      business_name,
      business_url: url || null,
      product_description,
      account_holder_name,
      routing_number,
      account_number,
    },
  };
}
