import type { ParameterSpec, ResponseSpec, RouteSpec } from '../../http/openapi/spec.ts';

/**
 * The public programme page (page.ts), described in the /api/v1 document: no key, answering HTML in the gateway's
 * page shell.
 */
const html = (description: string): ResponseSpec => ({
  description,
  headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
  content: { 'text/html': { type: 'string' } },
});

const slug: ParameterSpec = {
  name: 'slug',
  in: 'path',
  required: true,
  description: 'the programme page’s address, set in the dashboard (Settings › Programme page)',
  schema: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{1,62}$' },
};

const notFound = { '404': html('no programme at this address: a page saying so') };

export const openProgrammePage: RouteSpec = {
  operationId: 'openProgrammePage',
  method: 'get',
  path: '/p/{slug}',
  summary: 'The programme page: the programme, the commission terms it offers, and the application form',
  tags: ['Programme page'],
  description:
    'Public, no key, never cached. `ref`, an approved affiliate’s slug, makes that affiliate the parent of whoever applies (the recruit link).',
  security: [],
  parameters: [
    slug,
    {
      name: 'ref',
      in: 'query',
      required: false,
      description: 'the slug of the recruiting affiliate',
      schema: { type: 'string', maxLength: 64 },
    },
  ],
  responses: { '200': html('the page with the form'), ...notFound },
};

export const submitProgrammePage: RouteSpec = {
  operationId: 'submitProgrammePage',
  method: 'post',
  path: '/p/{slug}',
  summary: 'Apply: a pending affiliate (approved with auto-approve) and a mail to the applicant',
  tags: ['Programme page'],
  description:
    'Public, no key. The form fields name, email, website, promotion, terms and the optional ref. The answer is the same whether or not the address is already an affiliate of the programme.',
  security: [],
  parameters: [slug],
  body: {
    contentType: 'application/x-www-form-urlencoded',
    schema: { type: 'object', additionalProperties: { type: 'string' } },
    required: true,
  },
  responses: {
    '200': html('received: a page thanking the applicant'),
    '400': html('refused input: the form again with each problem'),
    ...notFound,
    '429': html('too many applications from this address or e-mail domain in the hour; Retry-After says when'),
    '503': html('the affiliates service did not answer in time: a page asking to try again'),
  },
};

export const programmePageSpecs = [openProgrammePage, submitProgrammePage];
