import { rawRequest } from '../events/setup.ts';
import type { ApiClient, ApiResponse } from '../helpers/client.ts';
import type { Sql } from '@platform/shared/db';

/** A W-9 of an individual with this TIN (an SSN unless told). */
export const w9 = (tin: string, extra: Record<string, unknown> = {}) => ({
  form_type: 'W-9',
  legal_name: 'Jane Doe',
  tax_classification: 'individual',
  address: { line1: '12 Main Street', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
  tin_type: 'ssn',
  tin,
  signature_name: 'Jane Doe',
  signed_on: '2026-11-20',
  ...extra,
});

/** A W-8BEN of a German individual. */
export const w8ben = (extra: Record<string, unknown> = {}) => ({
  form_type: 'W-8BEN',
  legal_name: 'Hans Muster',
  citizenship_country: 'DE',
  address: { line1: 'Hauptstrasse 1', city: 'Berlin', region: 'BE', postal_code: '10115', country: 'DE' },
  foreign_tin: 'DE98765432101',
  signature_name: 'Hans Muster',
  signed_on: '2026-03-02',
  ...extra,
});

export const taxFormsPath = (affiliateId: string) => `/api/v1/affiliates/${affiliateId}/tax_forms`;
export const payoutDetailsPath = (affiliateId: string) => `/api/v1/affiliates/${affiliateId}/payout_details`;
export const onboardingLinksPath = (affiliateId: string) => `/api/v1/affiliates/${affiliateId}/onboarding_links`;

export const putPayoutDetails = (client: ApiClient, affiliateId: string, body: unknown): Promise<ApiResponse> =>
  client.request('PUT', payoutDetailsPath(affiliateId), { body });

export const payoutHistoryPath = (affiliateId: string) => `/api/v1/affiliates/${affiliateId}/payout_details/history`;

/** The onboarding page of a link's URL as the affiliate submits it: a W-9 with this SSN, paid to this IBAN. */
export const submitOnboardingPage = (baseUrl: string, linkUrl: string, ssn: string, iban: string) =>
  rawRequest(
    baseUrl,
    'POST',
    new URL(linkUrl).pathname,
    { 'content-type': 'application/x-www-form-urlencoded' },
    new URLSearchParams({
      form_type: 'W-9',
      legal_name: 'Jane Doe',
      tax_classification: 'individual',
      address_line1: '12 Main Street',
      address_city: 'Springfield',
      address_region: 'IL',
      address_postal_code: '62701',
      address_country: 'US',
      tin_type: 'ssn',
      tin: ssn,
      signature_name: 'Jane Doe',
      signed_on: '2026-11-20',
      method: 'bank',
      iban,
    }).toString(),
  );

/** The onboarding page of a link's URL, opened. */
export const openOnboardingPage = (baseUrl: string, linkUrl: string) =>
  rawRequest(baseUrl, 'GET', new URL(linkUrl).pathname);

/** An affiliate's payout-details vault rows, oldest first: whether each is the one in use, and superseded. */
export const payoutVaultRows = async (sql: Sql, merchantId: string, affiliateId: string) => [
  ...(await sql<{ in_use: boolean; superseded: boolean }[]>`
    select v.id = a.payout_details_vault_id as in_use, v.superseded_at is not null as superseded
    from vault_secrets v join affiliates a on a.id = v.affiliate_id
    where v.merchant_id = ${merchantId} and v.affiliate_id = ${affiliateId} and v.kind = 'payout_details'
    order by v.created_at`),
];
