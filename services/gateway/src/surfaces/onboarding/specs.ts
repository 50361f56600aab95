import type { ParameterSpec, ResponseSpec, RouteSpec } from '../../http/openapi/spec.ts';

/**
 * The affiliates' onboarding page (page.ts), described in the /api/v1 document: public (its token is its
 * credential), answering HTML in the gateway's page shell.
 */
const html = (description: string): ResponseSpec => ({
  description,
  headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
  content: { 'text/html': { type: 'string' } },
});

const token: ParameterSpec = {
  name: 'token',
  in: 'path',
  required: true,
  description: 'the token of a link from POST /api/v1/affiliates/{affiliate_id}/onboarding_links',
  schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
};

const closed = {
  '404': html('an unknown link: a page saying so, without a form'),
  '410': html('a used or expired link: a page saying so, without a form'),
  '503': html('the affiliates service did not answer in time: a page asking to try again'),
};

export const openOnboardingPage: RouteSpec = {
  operationId: 'openOnboardingPage',
  method: 'get',
  path: '/onboarding/{token}',
  summary: "The affiliate's onboarding page: what is on file (masked) and the form",
  tags: ['Onboarding page'],
  description:
    'Public, no key, never cached. Records the browser’s `_svc_sess` visit among the affiliate’s visitor ids (own-fingerprint fraud rule).',
  security: [],
  parameters: [token],
  responses: { '200': html('the page with the form'), ...closed },
};

export const submitOnboardingPage: RouteSpec = {
  operationId: 'submitOnboardingPage',
  method: 'post',
  path: '/onboarding/{token}',
  summary: 'Submit the tax form and payout details; uses the link up',
  tags: ['Onboarding page'],
  description:
    'Public, no key. The form fields of the page (form_type, legal_name, tin, address_…, method, iban, …), stored in one transaction.',
  security: [],
  parameters: [token],
  body: {
    contentType: 'application/x-www-form-urlencoded',
    schema: { type: 'object', additionalProperties: { type: 'string' } },
    required: true,
  },
  responses: {
    '200': html('stored: a page with what is now on file (masked)'),
    '400': html('refused input: the form again with each problem’s path; the link stays usable'),
    ...closed,
  },
};

export const onboardingPageSpecs = [openOnboardingPage, submitOnboardingPage];
