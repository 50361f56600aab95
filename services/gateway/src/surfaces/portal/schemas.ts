import { Type, type TSchema } from '@sinclair/typebox';
import { MaskedPayoutDetails } from '@platform/shared/schemas/tax-forms';

/**
 * What /portal/api answers, each built field by field by its handler (routes-*.ts) from the services' own answers:
 * the schemas of the portal's OpenAPI document, from which the portal's typed client is generated. What it accepts
 * is in shared/src/schemas/portal.ts.
 */

const Nullable = <T extends TSchema>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description });
const Instant = (description: string) => Type.String({ format: 'date-time', description });
/** A decimal string with the currency's minor digits, as the portal shows money. */
const Amount = (description: string) => Type.String({ description, examples: ['41.80'] });

export const PortalSession = Type.Object(
  {
    email: Type.String({ description: 'the address signed in', examples: ['jane@example.com'] }),
    csrf_token: Type.String({ description: 'sent as X-Portal-CSRF on every request that changes something' }),
    embedded: Type.Boolean({ description: "opened inside the merchant's site: this affiliate only" }),
    return_url: Nullable(Type.String(), "an embedded session's way back to the merchant's site"),
    affiliate: Type.Object(
      {
        id: Type.String({ examples: ['aff_01jd3t6m0s2e4w5x6y7z8a9b0c'] }),
        display_name: Type.String(),
        status: Type.String({ examples: ['approved'] }),
      },
      { additionalProperties: false },
    ),
    programme: Type.Object(
      {
        merchant_name: Type.String(),
        currency: Type.String({ examples: ['USD'] }),
        slug: Nullable(Type.String(), "the programme page's slug, null while it has none"),
      },
      { additionalProperties: false },
    ),
    programmes: Type.Array(
      Type.Object({ affiliate_id: Type.String(), merchant_name: Type.String() }, { additionalProperties: false }),
      { description: 'the programmes the address may switch to (none in an embedded session)' },
    ),
  },
  { additionalProperties: false, $id: 'PortalSession' },
);

export const PortalHome = Type.Object(
  {
    referral_link: Type.String({ description: "the affiliate's link" }),
    coupons: Type.Array(Type.Object({ code: Type.String() }, { additionalProperties: false })),
    currency: Type.String({ examples: ['USD'] }),
    this_month: Type.Object(
      {
        clicks: Type.Integer(),
        conversions: Type.Integer(),
        earnings: Amount('commissions this calendar month (UTC)'),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, $id: 'PortalHome' },
);

export const PortalPerformance = Type.Object(
  {
    object: Type.Literal('analytics'),
    group_by: Type.String({ examples: ['day'] }),
    start: Instant('first instant counted'),
    end: Instant('instant the range stops before'),
    timezone: Type.String({ examples: ['Europe/Paris'] }),
    currency: Type.String({ examples: ['USD'] }),
    data: Type.Array(
      Type.Object(
        {
          key: Type.String({ description: "the bucket's start in `timezone`" }),
          clicks: Type.Integer(),
          conversions: Type.Integer(),
          revenue: Type.String({ description: 'exact decimal' }),
          commissions: Type.String({ description: 'exact decimal' }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, $id: 'PortalPerformance' },
);

/** A page of a portal list: `next_cursor` goes back as `starting_after`. */
const PageOf = <T extends TSchema>(row: T, $id: string) =>
  Type.Object(
    {
      data: Type.Array(row),
      has_more: Type.Boolean(),
      next_cursor: Nullable(Type.String(), 'the `starting_after` of the next page; null on the last'),
    },
    { additionalProperties: false, $id },
  );

export const PortalCommissionPage = PageOf(
  Type.Object(
    {
      id: Type.String({ examples: ['com_01jd3t6m0s2e4w5x6y7z8a9b0c'] }),
      status: Type.String({ examples: ['approved'] }),
      amount: Amount('the commission'),
      currency: Type.String({ examples: ['USD'] }),
      created_at: Instant('when it was created'),
      order: Type.String({ description: "the order's id masked to its last four characters", examples: ['••••1234'] }),
    },
    { additionalProperties: false, $id: 'PortalCommission' },
  ),
  'PortalCommissionPage',
);

export const PortalPayoutPage = PageOf(
  Type.Object(
    {
      id: Type.String({ examples: ['po_01jd3t6m0s2e4w5x6y7z8a9b0c'] }),
      status: Type.String({ examples: ['paid'] }),
      amount: Amount('the payout'),
      currency: Type.String({ examples: ['USD'] }),
      method: Nullable(Type.String(), 'how it was sent; null until then'),
      created_at: Instant('when it was created'),
      paid_at: Nullable(Instant('when it was marked paid'), 'when it was marked paid'),
    },
    { additionalProperties: false, $id: 'PortalPayout' },
  ),
  'PortalPayoutPage',
);

export const PortalTeam = Type.Object(
  {
    recruit_link: Nullable(Type.String(), "the programme page with the affiliate's ref; null while there is none"),
    children: Type.Integer({ description: 'affiliates this one recruited' }),
  },
  { additionalProperties: false, $id: 'PortalTeam' },
);

export const PortalPayoutSettings = Type.Object(
  {
    payout_details: Nullable(MaskedPayoutDetails, 'the payout details on file, masked; null while none are'),
    tax_forms: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          type: Type.String({ examples: ['W-9'] }),
          status: Type.String({ examples: ['valid'] }),
          signed_at: Type.String({ format: 'date', description: 'the day it was signed' }),
          expires_at: Nullable(Instant('W-8 forms only'), 'W-8 forms only'),
        },
        { additionalProperties: false },
      ),
    ),
    can_change_payout_details: Type.Boolean({ description: 'a fresh link opened this session' }),
    can_change_until: Nullable(Instant('until when'), 'until when a fresh link lets this session change them'),
  },
  { additionalProperties: false, $id: 'PortalPayoutSettings' },
);

/** The answer of a request taken (a link mailed, or, for an unknown address, nothing done): always the same. */
export const PortalAccepted = Type.Object({}, { additionalProperties: false, $id: 'PortalAccepted' });
