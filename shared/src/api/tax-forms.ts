import { Type } from '@sinclair/typebox';
import { operation } from './define.ts';
import { AffiliateIdParams } from '../schemas/affiliates.ts';
import { Cursor, Limit } from '../schemas/common.ts';
import {
  MaskedPayoutDetails,
  OnboardingLink,
  OnboardingState,
  PayoutDetailsBody,
  PayoutDetailsChangeList,
  TaxForm,
  TaxFormBody,
  TaxFormList,
} from '../schemas/tax-forms.ts';

export const taxFormsApi = {
  createTaxForm: operation({
    service: 'affiliates',
    name: 'tax_forms_create',
    operationId: 'createTaxForm',
    method: 'post',
    path: '/api/v1/affiliates/{affiliate_id}/tax_forms',
    scope: 'write',
    tag: 'Tax forms',
    summary: 'Submit a W-9, W-8BEN or W-8BEN-E; it supersedes the form on file and emits tax_form.submitted',
    params: AffiliateIdParams,
    body: TaxFormBody,
    success: [{ status: 201, schema: TaxForm, description: 'the stored form, its TIN masked' }],
  }),
  listTaxForms: operation({
    service: 'affiliates',
    name: 'tax_forms_list',
    operationId: 'listTaxForms',
    method: 'get',
    path: '/api/v1/affiliates/{affiliate_id}/tax_forms',
    scope: 'read',
    tag: 'Tax forms',
    summary: "The affiliate's tax forms with their status (valid, expired, superseded), newest first",
    params: AffiliateIdParams,
    success: [{ status: 200, schema: TaxFormList, description: 'the forms, TINs masked' }],
  }),
  putPayoutDetails: operation({
    service: 'affiliates',
    name: 'payout_details_put',
    operationId: 'putPayoutDetails',
    method: 'put',
    path: '/api/v1/affiliates/{affiliate_id}/payout_details',
    scope: 'write',
    tag: 'Tax forms',
    summary: 'Set how the affiliate is paid: a PayPal e-mail, an IBAN, or a US routing and account number',
    params: AffiliateIdParams,
    body: PayoutDetailsBody,
    success: [{ status: 200, schema: MaskedPayoutDetails, description: 'the payout details, masked' }],
  }),
  getPayoutDetails: operation({
    service: 'affiliates',
    name: 'payout_details_get',
    operationId: 'getPayoutDetails',
    method: 'get',
    path: '/api/v1/affiliates/{affiliate_id}/payout_details',
    scope: 'read',
    tag: 'Tax forms',
    summary: "The affiliate's payout details, masked (method null while none are set)",
    params: AffiliateIdParams,
    success: [{ status: 200, schema: MaskedPayoutDetails, description: 'the payout details, masked' }],
  }),
  listPayoutDetailsChanges: operation({
    service: 'affiliates',
    name: 'payout_details_changes_list',
    operationId: 'listPayoutDetailsChanges',
    method: 'get',
    path: '/api/v1/affiliates/{affiliate_id}/payout_details/history',
    scope: 'read',
    tag: 'Tax forms',
    summary:
      "Every change of the affiliate's payout details (by key, dashboard or onboarding link), masked, newest first",
    params: AffiliateIdParams,
    query: Type.Object({ cursor: Type.Optional(Cursor), limit: Type.Optional(Limit) }, { additionalProperties: false }),
    success: [{ status: 200, schema: PayoutDetailsChangeList, description: 'the changes, masked' }],
  }),
  createOnboardingLink: operation({
    service: 'affiliates',
    name: 'onboarding_links_create',
    operationId: 'createOnboardingLink',
    method: 'post',
    path: '/api/v1/affiliates/{affiliate_id}/onboarding_links',
    scope: 'write',
    tag: 'Tax forms',
    summary: 'A single-use link (24 hours) to a page where the affiliate fills in their tax form and payout details',
    params: AffiliateIdParams,
    success: [{ status: 201, schema: OnboardingLink, description: 'the link and when it expires' }],
  }),
} as const;

/** The token of an onboarding link, as its page's path carries it. */
const OnboardingTokenParams = Type.Object(
  { token: Type.String({ maxLength: 128, description: 'the onboarding link token' }) },
  { additionalProperties: false },
);

/**
 * What the onboarding page asks of the affiliates service. Not routes of /api/v1 (the gateway serves the page and
 * sends these itself): the merchant and the affiliate come from the link the token names, not from a key.
 */
export const onboardingPageApi = {
  openOnboarding: operation({
    service: 'affiliates',
    name: 'onboarding_open',
    operationId: 'openOnboarding',
    method: 'get',
    path: '/onboarding/{token}',
    scope: 'read',
    tag: 'Onboarding page',
    summary: "The link's state and what is on file (masked); records the visitor id for the fraud rules",
    params: OnboardingTokenParams,
    body: Type.Object(
      { visitor_id: Type.Optional(Type.String({ maxLength: 64, description: 'the `_svc_sess` cookie' })) },
      { additionalProperties: false },
    ),
    success: [{ status: 200, schema: OnboardingState, description: "the link's state and what is on file" }],
  }),
  submitOnboarding: operation({
    service: 'affiliates',
    name: 'onboarding_submit',
    operationId: 'submitOnboarding',
    method: 'post',
    path: '/onboarding/{token}',
    scope: 'write',
    tag: 'Onboarding page',
    summary: 'Stores the tax form and the payout details of the page in one transaction and uses up the link',
    params: OnboardingTokenParams,
    body: Type.Object({ tax_form: TaxFormBody, payout_details: PayoutDetailsBody }, { additionalProperties: false }),
    success: [{ status: 200, schema: OnboardingState, description: "the link's state and what is on file" }],
  }),
} as const;
