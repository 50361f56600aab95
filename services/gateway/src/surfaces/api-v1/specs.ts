import { operations, type ApiOperation } from '@platform/shared/api';
import { DOMAIN_EVENT_TYPES } from '@platform/shared/catalogue';
import { ErrorEnvelopeSchema } from '@platform/shared/errors';
import { webhookEnvelope } from '@platform/shared/schemas/events';
import type {
  Json,
  ParameterSpec,
  ResponseSpec,
  RouteSpec,
  SurfaceSpec,
  WebhookSpec,
} from '../../http/openapi/spec.ts';
import { onboardingPageSpecs } from '../onboarding/specs.ts';
import { programmePageSpecs } from '../programme/specs.ts';
import { trackingSpecs } from '../tracking/specs.ts';

/**
 * The merchant REST API's surface (/api/v1): its route specs are the operation catalogue of shared/src/api (method,
 * path, scope, TypeBox schemas), answered by one handler that forwards to the owning service (router.ts).
 * Its document also describes the public routes beside it (referral tracking, the onboarding page) and the
 * webhooks merchants receive.
 */

const ERROR_RESPONSES: Record<string, string> = {
  '400': 'INVALID_INPUT: the body, a parameter or the cursor is invalid (see error.details)',
  '401': 'UNAUTHORIZED: missing, unknown or revoked key',
  '402': "PLAN_REQUIRED: the merchant's plan is below Growth",
  '403': 'FORBIDDEN: the key lacks the scope',
  '404': 'NOT_FOUND: no such resource for this merchant',
  '409':
    "CONFLICT: a duplicate, a reused identifier with a different body, a status the resource's current status may not move to (the message names both), or an Idempotency-Key reused with another request or whose first request is still running",
  '413': 'INVALID_INPUT: the body exceeds 1 MiB',
  '415': 'INVALID_INPUT: the body is not JSON',
  '429': 'RATE_LIMITED: the key exceeded rate_limit_per_min; see Retry-After',
  '500': 'INTERNAL: an unexpected failure; no details are exposed',
  '503': 'UNAVAILABLE: a dependency is down; see Retry-After',
};

/** On every POST: Stripe's Idempotency-Key (services/gateway/src/http/idempotency). */
const IDEMPOTENCY_KEY: ParameterSpec = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'makes the POST safe to retry: the same key with the same method, path and body within 24 hours answers the first ' +
    "request's status and body again (with Idempotent-Replayed: true) without doing the work twice; with another " +
    'request it is 409 CONFLICT. Keys belong to the API key that sends them.',
  schema: {
    type: 'string',
    minLength: 1,
    maxLength: 255,
    pattern: '^[\\x20-\\x7E]+$',
    examples: ['order-1234-attempt'],
  },
};

const REPLAY_HEADERS = {
  'Idempotent-Replayed': {
    description: 'true when the answer is the stored answer of an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
  'Original-Request': {
    description: 'on a replay: the X-Request-Id of the request whose answer this is',
    schema: { type: 'string' },
  },
};

const RATE_HEADERS = {
  'RateLimit-Limit': { description: "the key's requests per minute", schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'requests left in the current window', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'seconds until the window resets', schema: { type: 'integer' } },
  'X-Request-Id': { description: 'identifies the request; repeated in error bodies', schema: { type: 'string' } },
};

const refHeaders = (): Json =>
  Object.fromEntries(Object.keys(RATE_HEADERS).map((h) => [h, { $ref: `#/components/headers/${h}` }]));

/** One operation of the catalogue as a route spec: its key and scope, its schemas, its answers and refusals. */
export function operationSpec(op: ApiOperation): RouteSpec {
  const post = op.method === 'post';
  const responses: RouteSpec['responses'] = {};
  for (const s of op.success) {
    responses[String(s.status)] = {
      description: s.description,
      headers: post ? { ...refHeaders(), ...REPLAY_HEADERS } : refHeaders(),
      // 204 has no body, so no content is listed for it.
      ...(s.status === 204 ? {} : { content: { [s.contentType ?? 'application/json']: s.schema } }),
    };
  }
  const errorStatuses = ['400', '401', '402', '403', '429', '500', '503'];
  if (Object.keys(op.params.properties).length > 0) errorStatuses.push('404');
  if (op.body) errorStatuses.push('413', '415');
  if (op.body || post) errorStatuses.push('409');
  for (const status of errorStatuses.sort()) responses[status] = { $ref: `#/components/responses/E${status}` };
  return {
    operationId: op.operationId,
    method: op.method,
    path: op.path,
    summary: op.summary,
    tags: [op.tag],
    description: `Requires scope \`${op.scope}\` (or \`*\`).`,
    security: [{ bearer: [] }],
    params: op.params,
    query: op.query,
    ...(post ? { parameters: [IDEMPOTENCY_KEY] } : {}),
    ...(op.body ? { body: { contentType: 'application/json', schema: op.body, required: true } } : {}),
    responses,
  };
}

/** GET /api/v1/openapi: public, answering this surface's document. */
export const openApiSpec: RouteSpec = {
  operationId: 'getOpenApi',
  method: 'get',
  path: '/api/v1/openapi',
  summary: 'This document',
  tags: ['Meta'],
  security: [],
  responses: {
    '200': {
      description: 'the OpenAPI 3.1 description of the API',
      content: { 'application/json': { type: 'object' } },
    },
  },
};

/**
 * Each event's envelope is a named component (AffiliateCreatedEvent, …) and WebhookEvent their union, told apart by
 * `type`: a generated client gets one type for whatever its endpoint receives.
 */
function webhookSpecs(): { hooks: WebhookSpec[]; union: Json } {
  const header = (name: string, description: string): ParameterSpec => ({
    name,
    in: 'header',
    required: true,
    schema: { type: 'string' },
    description,
  });
  const hooks = DOMAIN_EVENT_TYPES.map((type): WebhookSpec => {
    const component = `${type
      .split(/[._]/)
      .map((w) => w[0]!.toUpperCase() + w.slice(1))
      .join('')}Event`;
    return {
      name: type,
      component,
      body: webhookEnvelope(type),
      operation: {
        operationId: `webhook_${type.replace('.', '_')}`,
        summary: `${type} event`,
        description:
          'Sent to each enabled endpoint subscribed to this type. Verify webhook-signature (Standard Webhooks v1: ' +
          'base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`) and deduplicate on webhook-id.',
        parameters: [
          header('webhook-id', 'equals the body id'),
          header('webhook-timestamp', 'Unix seconds'),
          header('webhook-signature', 'space-separated v1,<base64>'),
        ],
        responses: { '200': { description: 'any 2xx acknowledges the delivery' } },
      },
    };
  });
  const refs = Object.fromEntries(hooks.map((h) => [h.name, `#/components/schemas/${h.component}`]));
  const union = {
    description: 'The body of any webhook: the envelope of one of the event types, told apart by `type`.',
    oneOf: Object.values(refs).map(($ref) => ({ $ref })),
    discriminator: { propertyName: 'type', mapping: refs },
  };
  return { hooks, union };
}

/** The surface of GET /api/v1/openapi, with `serverUrl` (PUBLIC_BASE_URL) as its server. */
export function apiV1Surface(serverUrl = 'http://localhost:8080'): SurfaceSpec {
  const { hooks, union } = webhookSpecs();
  const errorResponses: Record<string, ResponseSpec> = {};
  for (const [status, description] of Object.entries(ERROR_RESPONSES)) {
    errorResponses[`E${status}`] = {
      description,
      headers: refHeaders(),
      content: { 'application/json': { $ref: '#/components/schemas/Error' } },
    };
  }
  return {
    info: {
      title: 'Affiliate Program API',
      version: '1.0.0',
      description:
        'Affiliates with multi-level lineage, commissions, and conversion events attributed by referral cookie or coupon. ' +
        'Every request carries `Authorization: Bearer svc_…`; keys are tenant-scoped and need the Growth plan or higher.',
    },
    servers: [{ url: serverUrl, description: 'the platform gateway (PUBLIC_BASE_URL)' }],
    tags: [...new Set(operations.map((o) => o.tag)), 'Tracking', 'Onboarding page', 'Programme page', 'Meta'],
    routes: [
      ...operations.map(operationSpec),
      openApiSpec,
      ...trackingSpecs,
      ...onboardingPageSpecs,
      ...programmePageSpecs,
    ],
    webhooks: hooks,
    schemas: { WebhookEvent: union, Error: ErrorEnvelopeSchema },
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer', description: 'an API key: svc_ followed by 43 characters' },
    },
    headers: RATE_HEADERS,
    responses: errorResponses,
  };
}
