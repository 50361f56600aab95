import { TrackedVisit, TrackVisitBody, VISIT_COOKIE } from '@platform/shared/schemas/tracking';
import type { Json, ParameterSpec, ResponseSpec, RouteSpec } from '../../http/openapi/spec.ts';

/**
 * The public referral-tracking routes (router.ts), described in the /api/v1 document: no key, so no
 * RateLimit-* headers and their own 429 (per client address, TRACKING_RATE_LIMIT_PER_MIN).
 */
const error = (description: string): ResponseSpec => ({
  description,
  headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
  content: { 'application/json': { $ref: '#/components/schemas/Error' } },
});
const limited = error(
  'RATE_LIMITED: this address recorded TRACKING_RATE_LIMIT_PER_MIN visits in the last minute; see Retry-After',
);
const unavailable = error('UNAVAILABLE: the events service did not answer in time');

const slug: ParameterSpec = {
  name: 'slug',
  in: 'path',
  required: true,
  description: "an approved affiliate's slug",
  schema: { type: 'string' },
};

const redirect = (description: string): ResponseSpec => ({
  description,
  headers: {
    Location: {
      description: "the merchant's landing_url with via={slug} added",
      schema: { type: 'string', format: 'uri' },
    },
    'Set-Cookie': {
      description: `${VISIT_COOKIE}={visit id}; Max-Age={seconds left of the attribution window}; Path=/; SameSite=Lax (Secure over https)`,
      schema: { type: 'string' },
    },
  } satisfies Json,
});

const referral = (operationId: string, path: string, summary: string, parameters: ParameterSpec[]): RouteSpec => ({
  operationId,
  method: 'get',
  path,
  summary,
  tags: ['Tracking'],
  description: 'Public, no key. Records a visit, sets the visit cookie and redirects to the landing page.',
  security: [],
  parameters,
  responses: {
    '302': redirect('the visit is recorded; on to the landing page'),
    '404': error('NOT_FOUND: unknown merchant or slug, an affiliate not approved, or no landing page configured'),
    '429': limited,
    '503': unavailable,
  },
});

export const trackingSpecs: RouteSpec[] = [
  referral('followReferralLink', '/r/{merchant_id}/{slug}', 'Follow a referral link', [
    { name: 'merchant_id', in: 'path', required: true, description: 'the merchant', schema: { type: 'string' } },
    slug,
  ]),
  referral(
    'followReferralLinkOnTrackingHost',
    '/r/{slug}',
    "Follow a referral link on the merchant's tracking_host (the merchant is found by Host)",
    [slug],
  ),
  {
    operationId: 'getTrackingScript',
    method: 'get',
    path: '/t/script.js',
    summary: 'The tracking script merchants embed (data-merchant, optional data-fingerprint)',
    tags: ['Tracking'],
    security: [],
    responses: {
      '200': {
        description: `on a page opened with ?via={slug}, records the visit with POST /t/visit and sets ${VISIT_COOKIE}`,
        content: { 'application/javascript': { type: 'string' } },
      },
    },
  },
  {
    operationId: 'recordVisit',
    method: 'post',
    path: '/t/visit',
    summary: 'Record a visit (called by the tracking script)',
    tags: ['Tracking'],
    description: 'Public, no key; CORS open to any origin, without credentials. Body at most 8 KiB.',
    security: [],
    body: { contentType: 'application/json', schema: TrackVisitBody, required: true },
    responses: {
      '200': { description: "the browser's current visit is kept", content: { 'application/json': TrackedVisit } },
      '201': { description: 'a visit is recorded', content: { 'application/json': TrackedVisit } },
      '400': error('INVALID_INPUT: see error.details'),
      '404': error('NOT_FOUND: unknown merchant or slug, or an affiliate not approved'),
      '413': error('INVALID_INPUT: the body exceeds 8 KiB'),
      '415': error('INVALID_INPUT: the body is not JSON'),
      '429': limited,
      '503': unavailable,
    },
  },
  {
    operationId: 'recordVisitPreflight',
    method: 'options',
    path: '/t/visit',
    summary: 'CORS preflight of POST /t/visit',
    tags: ['Tracking'],
    security: [],
    responses: {
      '204': { description: 'Access-Control-Allow-Methods: POST, -Headers: Content-Type, -Max-Age: 86400' },
    },
  },
];
