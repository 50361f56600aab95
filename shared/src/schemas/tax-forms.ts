import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { ListOf, NullableTimestamp, Timestamp } from './common.ts';

export const TAX_FORM_TYPES = ['W-9', 'W-8BEN', 'W-8BEN-E'] as const;
export type TaxFormType = (typeof TAX_FORM_TYPES)[number];

export const TAX_CLASSIFICATIONS = [
  'individual',
  'sole_proprietor',
  'c_corporation',
  's_corporation',
  'partnership',
  'trust_estate',
  'llc',
] as const;

/**
 * A union whose branches are told apart by one literal field: validated as the OpenAPI discriminator (only the
 * branch the field names is checked, so errors speak of that branch), typed as the union of the branches.
 */
function Tagged<T extends TObject[]>(tag: string, branches: [...T], options: { $id: string; description: string }) {
  return Type.Unsafe<Static<T[number]>>({ oneOf: branches, discriminator: { propertyName: tag }, ...options });
}

const Text = (description: string, example: string, maxLength = 200) =>
  Type.String({ minLength: 1, maxLength, description, examples: [example] });

const CountryCode = (description: string) =>
  Type.String({ pattern: '^[A-Z]{2}$', description: `${description} (ISO 3166-1 alpha-2)`, examples: ['DE'] });

const SignedOn = Type.String({
  format: 'date',
  description: 'the day the form was signed (YYYY-MM-DD); not in the future',
  examples: ['2026-11-20'],
});

const Address = <C extends TSchema>(country: C) =>
  Type.Object(
    {
      line1: Text('street and number', '12 Main Street'),
      line2: Type.Optional(Text('apartment, suite, floor', 'Suite 4')),
      city: Text('city', 'Springfield', 100),
      region: Text('state, province or region', 'IL', 100),
      postal_code: Text('postal or ZIP code', '62701', 20),
      country,
    },
    { additionalProperties: false, description: 'the permanent residence or registered address' },
  );

const Signature = {
  signature_name: Text('the name the form was signed with', 'Jane Doe'),
  signed_on: SignedOn,
};

const W9 = Type.Object(
  {
    form_type: Type.Literal('W-9'),
    legal_name: Text('name as shown on the income tax return', 'Jane Doe'),
    business_name: Type.Optional(Text('business or disregarded entity name', 'Doe Media LLC')),
    tax_classification: Type.Union(
      TAX_CLASSIFICATIONS.map((c) => Type.Literal(c)),
      { description: 'federal tax classification', examples: ['individual'] },
    ),
    address: Address(Type.Literal('US', { description: 'a W-9 is for US persons' })),
    tin_type: Type.Union([Type.Literal('ssn'), Type.Literal('ein')], {
      description: 'social security number or employer identification number',
      examples: ['ssn'],
    }),
    tin: Type.String({
      maxLength: 20,
      description: 'the TIN: 123-45-6789 (SSN), 12-3456789 (EIN) or nine digits. Stored encrypted, shown masked',
      examples: ['123-45-6789'],
    }),
    ...Signature,
  },
  { additionalProperties: false, description: 'Form W-9 (US persons)' },
);

const ForeignTin = {
  foreign_tin: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 40,
      description: 'the tax identification number of the country of residence. Stored encrypted, shown masked',
      examples: ['DE123456789'],
    }),
  ),
  foreign_tin_not_required_reason: Type.Optional(
    Text('why no foreign TIN is given (one of foreign_tin and this is required)', 'not issued by my country', 500),
  ),
  treaty_country: Type.Optional(CountryCode('the country whose tax treaty with the US is claimed')),
};

/** A W-8 form: who the beneficial owner is, the country that makes them foreign, and the foreign TIN. */
const W8 = <F extends string, C extends string>(
  formType: F,
  owner: { description: string; example: string },
  country: { field: C; description: string },
  description: string,
) =>
  Type.Object(
    {
      form_type: Type.Literal(formType),
      legal_name: Text(owner.description, owner.example),
      ...({ [country.field]: CountryCode(country.description) } as Record<C, ReturnType<typeof CountryCode>>),
      address: Address(CountryCode('country')),
      ...ForeignTin,
      ...Signature,
    },
    { additionalProperties: false, description },
  );

const W8Ben = W8(
  'W-8BEN',
  { description: 'name of the individual who is the beneficial owner', example: 'Hans Muster' },
  { field: 'citizenship_country', description: 'country of citizenship' },
  'Form W-8BEN (foreign individuals)',
);

const W8BenE = W8(
  'W-8BEN-E',
  { description: 'name of the organisation that is the beneficial owner', example: 'Muster Medien GmbH' },
  { field: 'incorporation_country', description: 'country of incorporation or organisation' },
  'Form W-8BEN-E (foreign entities)',
);

export const TaxFormBody = Tagged('form_type', [W9, W8Ben, W8BenE], {
  $id: 'CreateTaxForm',
  description: 'a W-9, W-8BEN or W-8BEN-E, told apart by form_type',
});
export type TaxFormBody = Static<typeof TaxFormBody>;

export const TAX_FORM_STATUSES = ['valid', 'expired', 'superseded'] as const;
export type TaxFormStatus = (typeof TAX_FORM_STATUSES)[number];

/** A stored form as it leaves the platform: the TIN only as its last four characters. */
export const TaxForm = Type.Object(
  {
    id: Type.String({ description: 'identifier', examples: ['txf_01jd3t6m0s2e4w5x6y7z8a9b0c'] }),
    affiliate_id: Type.String({ description: 'the affiliate', examples: ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c'] }),
    form_type: Type.Union(
      TAX_FORM_TYPES.map((t) => Type.Literal(t)),
      { description: 'which form', examples: ['W-9'] },
    ),
    status: Type.Union(
      TAX_FORM_STATUSES.map((s) => Type.Literal(s)),
      {
        description: 'valid: in force; expired: a W-8 past its expiry; superseded: a later form replaced it',
        examples: ['valid'],
      },
    ),
    legal_name: Type.String({ description: 'the name on the form', examples: ['Jane Doe'] }),
    tin_type: Type.Union([Type.Literal('ssn'), Type.Literal('ein'), Type.Literal('foreign'), Type.Null()], {
      description: 'ssn or ein (W-9), foreign (a W-8 with a foreign TIN), null when none was given',
      examples: ['ssn'],
    }),
    tin_masked: Type.Union([Type.String(), Type.Null()], {
      description: 'the TIN masked to its last four characters',
      examples: ['*****6789'],
    }),
    country: Type.String({ description: 'the address country (ISO 3166-1 alpha-2)', examples: ['US'] }),
    signed_on: Type.String({ format: 'date', description: 'the day it was signed', examples: ['2026-11-20'] }),
    submitted_at: Timestamp('when the form was submitted'),
    expires_at: NullableTimestamp('W-8 forms: the end of the third calendar year after signing; null for a W-9'),
  },
  { additionalProperties: false, $id: 'TaxForm' },
);
export type TaxForm = Static<typeof TaxForm>;

export const TaxFormList = Type.Object(
  { data: Type.Array(TaxForm, { description: "the affiliate's forms, newest first" }) },
  { additionalProperties: false, $id: 'TaxFormList' },
);

const PaypalDetails = Type.Object(
  {
    method: Type.Literal('paypal'),
    paypal_email: Type.String({
      format: 'email',
      maxLength: 254,
      description: 'the PayPal account to pay',
      examples: ['jane@example.com'],
    }),
  },
  { additionalProperties: false, description: 'paid through PayPal' },
);

const BankDetails = Type.Object(
  {
    method: Type.Literal('bank'),
    iban: Type.Optional(
      Type.String({
        maxLength: 42,
        description: 'an IBAN (spaces allowed; the mod-97 checksum is checked); or routing_number and account_number',
        examples: ['DE89 3704 0044 0532 0130 00'],
      }),
    ),
    routing_number: Type.Optional(
      Type.String({
        maxLength: 9,
        description: 'a US ABA routing number, nine digits (checksum checked); with account_number',
        examples: ['011000015'],
      }),
    ),
    account_number: Type.Optional(
      Type.String({
        maxLength: 17,
        description: 'a US bank account number, 4 to 17 digits',
        examples: ['000123456789'],
      }),
    ),
  },
  { additionalProperties: false, description: 'paid by bank transfer: an IBAN, or a US routing and account number' },
);

export const PayoutDetailsBody = Tagged('method', [PaypalDetails, BankDetails], {
  $id: 'PutPayoutDetails',
  description: 'how the affiliate is paid: PayPal, or bank transfer',
});
export type PayoutDetailsBody = Static<typeof PayoutDetailsBody>;

/** Payout details as they are kept: exactly one way of paying. */
export type PayoutDetails =
  | { method: 'paypal'; paypal_email: string }
  | { method: 'bank'; iban: string }
  | { method: 'bank'; routing_number: string; account_number: string };

export const MaskedPayoutDetails = Type.Object(
  {
    method: Type.Union([Type.Literal('paypal'), Type.Literal('bank'), Type.Null()], {
      description: 'how the affiliate is paid; null while no payout details are set',
      examples: ['bank'],
    }),
    paypal_email: Type.Optional(
      Type.String({ description: 'masked to its last four characters', examples: ['*****.com'] }),
    ),
    iban: Type.Optional(Type.String({ description: 'masked to its last four characters', examples: ['*****3000'] })),
    routing_number: Type.Optional(
      Type.String({ description: 'masked to its last four characters', examples: ['*****0015'] }),
    ),
    account_number: Type.Optional(
      Type.String({ description: 'masked to its last four characters', examples: ['*****6789'] }),
    ),
    updated_at: NullableTimestamp('when they were set; null while none are'),
  },
  { additionalProperties: false, $id: 'PayoutDetails', description: 'payout details, masked' },
);
export type MaskedPayoutDetails = Static<typeof MaskedPayoutDetails>;

export const OnboardingLink = Type.Object(
  {
    id: Type.String({
      description: 'identifier; the payout details history names the link that made a change by it',
      examples: ['obl_01jd3t6m0s2e4w5x6y7z8a9b0c'],
    }),
    url: Type.String({
      format: 'uri',
      description: 'the page where the affiliate fills in the tax form and payout details; works once',
      examples: ['https://affiliates.example.com/onboarding/2c1Zt0c8pQ…'],
    }),
    expires_at: Timestamp('24 hours after creation'),
  },
  { additionalProperties: false, $id: 'OnboardingLink' },
);
export type OnboardingLink = Static<typeof OnboardingLink>;

/** What the onboarding page shows: the link's state and, while it can be used, what is on file (masked). */
export const OnboardingState = Type.Object(
  {
    status: Type.Union([Type.Literal('open'), Type.Literal('expired'), Type.Literal('used'), Type.Literal('revoked')], {
      description:
        'open: the form may be submitted; expired, used, or revoked (a newer link of the affiliate was made or ' +
        'used): the page says so, without a form',
      examples: ['open'],
    }),
    merchant_name: Type.String({ description: 'whom the affiliate fills the form in for', examples: ['Acme'] }),
    affiliate_name: Type.String({ description: "the affiliate's display name", examples: ['Jane Doe'] }),
    expires_at: Timestamp('when the link stops working'),
    tax_form: Type.Union([TaxForm, Type.Null()], { description: 'the form in force, masked; null when none' }),
    payout_details: Type.Union([MaskedPayoutDetails, Type.Null()], { description: 'masked; null when none' }),
  },
  { additionalProperties: false },
);
export type OnboardingState = Static<typeof OnboardingState>;

const PAYOUT_DETAILS_SOURCES = ['api', 'dashboard', 'onboarding_link', 'portal'] as const;
export type PayoutDetailsSource = (typeof PAYOUT_DETAILS_SOURCES)[number];

/** Payout details as one change saw them: masked like MaskedPayoutDetails, without its updated_at. */
const MaskedDetailsValue = Type.Object(
  {
    method: Type.Union([Type.Literal('paypal'), Type.Literal('bank')], { description: 'how the affiliate is paid' }),
    paypal_email: Type.Optional(Type.String({ description: 'masked to its last four characters' })),
    iban: Type.Optional(Type.String({ description: 'masked to its last four characters' })),
    routing_number: Type.Optional(Type.String({ description: 'masked to its last four characters' })),
    account_number: Type.Optional(Type.String({ description: 'masked to its last four characters' })),
  },
  { additionalProperties: false, description: 'payout details, masked' },
);

/** One change of an affiliate's payout details, as the audit keeps it: never more than the last four characters. */
export const PayoutDetailsChange = Type.Object(
  {
    id: Type.String({ description: 'identifier', examples: ['pdc_01jd3t6m0s2e4w5x6y7z8a9b0c'] }),
    affiliate_id: Type.String({ description: 'the affiliate', examples: ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c'] }),
    changed_at: Timestamp('when the change was stored'),
    source: Type.Union(
      PAYOUT_DETAILS_SOURCES.map((s) => Type.Literal(s)),
      {
        description:
          'api: a key; dashboard: a dashboard user; onboarding_link: the affiliate, on the onboarding page; portal: the affiliate, in the affiliate portal through a fresh e-mailed link (actor_id its own id)',
        examples: ['onboarding_link'],
      },
    ),
    actor_id: Type.Union([Type.String(), Type.Null()], {
      description:
        'the API key (key_…), dashboard user (usr_…), onboarding link (obl_…) or, in the portal, affiliate (aff_…) that made it; null if unknown',
      examples: ['obl_01jd3t6m0s2e4w5x6y7z8a9b0c'],
    }),
    before: Type.Union([MaskedDetailsValue, Type.Null()], { description: 'masked; null when none were set' }),
    after: MaskedDetailsValue,
  },
  { additionalProperties: false, $id: 'PayoutDetailsChange' },
);
export type PayoutDetailsChange = Static<typeof PayoutDetailsChange>;

export const PayoutDetailsChangeList = ListOf(PayoutDetailsChange, 'PayoutDetailsChangeList');
