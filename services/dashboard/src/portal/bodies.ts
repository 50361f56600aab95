/**
 * The onboarding page's flat fields as the API's bodies: the same mapping as gateway/onboarding/submission.ts (the
 * dashboard may not import the gateway's code, see eslint's restricted zones), so the portal's forms and the
 * onboarding page send the same bodies. Blank fields are left out, so the API's checks name what is missing.
 */
type Fields = Record<string, string>;

function pick(fields: Fields, names: Record<string, string>): Fields {
  const picked: Fields = {};
  for (const [to, from] of Object.entries(names)) {
    const v = fields[from]?.trim();
    if (v) picked[to] = v;
  }
  return picked;
}

const upper = (o: Fields): Fields => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v.toUpperCase()]));

export function payoutDetailsBody(fields: Fields): object {
  const method = fields['method'] || 'paypal';
  return method === 'paypal'
    ? { method, ...pick(fields, { paypal_email: 'paypal_email' }) }
    : { method, ...pick(fields, { iban: 'iban', routing_number: 'routing_number', account_number: 'account_number' }) };
}

export function taxFormBody(fields: Fields): object {
  const formType = fields['form_type'] || 'W-9';
  const address = pick(fields, {
    line1: 'address_line1',
    line2: 'address_line2',
    city: 'address_city',
    region: 'address_region',
    postal_code: 'address_postal_code',
  });
  const country = fields['address_country']?.trim();
  const common = {
    form_type: formType,
    address: country ? { ...address, country: country.toUpperCase() } : address,
    ...pick(fields, { legal_name: 'legal_name', signature_name: 'signature_name', signed_on: 'signed_on' }),
  };
  if (formType === 'W-9')
    return {
      ...common,
      ...pick(fields, {
        business_name: 'business_name',
        tax_classification: 'tax_classification',
        tin_type: 'tin_type',
        tin: 'tin',
      }),
    };
  const countryField = formType === 'W-8BEN-E' ? 'incorporation_country' : 'citizenship_country';
  return {
    ...common,
    ...upper(pick(fields, { [countryField]: 'country', treaty_country: 'treaty_country' })),
    ...pick(fields, { foreign_tin: 'foreign_tin', foreign_tin_not_required_reason: 'foreign_tin_not_required_reason' }),
  };
}
