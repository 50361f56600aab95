/**
 * The onboarding form's fields (flat, as a browser posts them) as the body of the submit operation: the tax form of
 * the chosen type and the payout details of the chosen method, each with only its own fields. Blank fields are left
 * out, so the service's checks name what is missing.
 */
export function submission(fields: Record<string, unknown>): { tax_form: object; payout_details: object } {
  const value = (name: string): string | undefined => {
    const v = fields[name];
    return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
  };
  const pick = (names: Record<string, string>): Record<string, string> => {
    const picked: Record<string, string> = {};
    for (const [to, from] of Object.entries(names)) {
      const v = value(from);
      if (v !== undefined) picked[to] = v;
    }
    return picked;
  };
  const formType = value('form_type') ?? 'W-9';
  const address = pick({
    line1: 'address_line1',
    line2: 'address_line2',
    city: 'address_city',
    region: 'address_region',
    postal_code: 'address_postal_code',
    country: 'address_country',
  });
  if (address['country']) address['country'] = address['country'].toUpperCase();
  const common = {
    form_type: formType,
    address,
    ...pick({ legal_name: 'legal_name', signature_name: 'signature_name', signed_on: 'signed_on' }),
  };
  const upper = (o: Record<string, string>): Record<string, string> =>
    Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v.toUpperCase()]));
  let taxForm: object;
  if (formType === 'W-9') {
    taxForm = {
      ...common,
      ...pick({
        business_name: 'business_name',
        tax_classification: 'tax_classification',
        tin_type: 'tin_type',
        tin: 'tin',
      }),
    };
  } else {
    const countryField = formType === 'W-8BEN-E' ? 'incorporation_country' : 'citizenship_country';
    taxForm = {
      ...common,
      ...upper(pick({ [countryField]: 'country', treaty_country: 'treaty_country' })),
      ...pick({ foreign_tin: 'foreign_tin', foreign_tin_not_required_reason: 'foreign_tin_not_required_reason' }),
    };
  }
  const method = value('method') ?? 'paypal';
  const payoutDetails =
    method === 'paypal'
      ? { method, ...pick({ paypal_email: 'paypal_email' }) }
      : { method, ...pick({ iban: 'iban', routing_number: 'routing_number', account_number: 'account_number' }) };
  return { tax_form: taxForm, payout_details: payoutDetails };
}
