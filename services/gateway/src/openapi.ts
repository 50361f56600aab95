import type { TObject, TSchema } from '@sinclair/typebox';
import { operations } from '@platform/shared/api';
import { DOMAIN_EVENT_TYPES } from '@platform/shared/catalogue';
import { ErrorEnvelopeSchema } from '@platform/shared/errors';
import { webhookEnvelope } from '@platform/shared/schemas/events';
import { TrackedVisit, TrackVisitBody, VISIT_COOKIE } from '@platform/shared/schemas/tracking';
import { onboardingPagePaths } from './onboarding/openapi.ts';

type Json = Record<string, unknown>;

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

/** On every POST: Stripe's Idempotency-Key (services/gateway/src/idempotency). */
const IDEMPOTENCY_KEY: Json = {
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

/**
 * Builds the OpenAPI 3.1 document from the operation catalogue and its TypeBox schemas, the same objects that
 * validate requests in the services. Schemas carrying a $id become components and are referenced.
 */
export function buildOpenApi(serverUrl = 'http://localhost:8080'): Json {
  const components: Record<string, Json> = {};
  const toJson = (schema: TSchema): Json => lift(JSON.parse(JSON.stringify(schema)) as Json, components, true);

  const paths: Record<string, Record<string, Json>> = {};
  for (const op of operations) {
    const post = op.method === 'post';
    const parameters = [
      ...objectParameters(op.params, 'path', toJson),
      ...objectParameters(op.query, 'query', toJson),
      ...(post ? [IDEMPOTENCY_KEY] : []),
    ];
    const responses: Record<string, Json> = {};
    for (const s of op.success) {
      responses[String(s.status)] = {
        description: s.description,
        headers: post ? { ...refHeaders(), ...REPLAY_HEADERS } : refHeaders(),
        // 204 has no body, so no content is listed for it.
        ...(s.status === 204
          ? {}
          : { content: { [s.contentType ?? 'application/json']: { schema: toJson(s.schema) } } }),
      };
    }
    const errorStatuses = ['400', '401', '402', '403', '429', '500', '503'];
    if (Object.keys(op.params.properties).length > 0) errorStatuses.push('404');
    if (op.body) errorStatuses.push('413', '415');
    if (op.body || post) errorStatuses.push('409');
    for (const status of errorStatuses.sort()) responses[status] = { $ref: `#/components/responses/E${status}` };
    (paths[op.path] ??= {})[op.method] = {
      operationId: op.operationId,
      summary: op.summary,
      tags: [op.tag],
      description: `Requires scope \`${op.scope}\` (or \`*\`).`,
      security: [{ bearer: [] }],
      ...(parameters.length ? { parameters } : {}),
      ...(op.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: toJson(op.body) } } } }
        : {}),
      responses,
    };
  }
  (paths['/api/v1/openapi'] ??= {})['get'] = {
    operationId: 'getOpenApi',
    summary: 'This document',
    tags: ['Meta'],
    security: [],
    responses: {
      '200': {
        description: 'the OpenAPI 3.1 description of the API',
        content: { 'application/json': { schema: { type: 'object' } } },
      },
    },
  };

  Object.assign(paths, trackingPaths(toJson));
  Object.assign(paths, onboardingPagePaths());

  // Each event's envelope is a named component (AffiliateCreatedEvent, …) and WebhookEvent their union, told apart by
  // `type`: a generated client gets one type for whatever its endpoint receives.
  const webhooks: Record<string, Json> = {};
  const eventRefs: Record<string, string> = {};
  for (const type of DOMAIN_EVENT_TYPES) {
    const name = `${type
      .split(/[._]/)
      .map((w) => w[0]!.toUpperCase() + w.slice(1))
      .join('')}Event`;
    components[name] = toJson(webhookEnvelope(type));
    eventRefs[type] = `#/components/schemas/${name}`;
    webhooks[type] = {
      post: {
        operationId: `webhook_${type.replace('.', '_')}`,
        summary: `${type} event`,
        description:
          'Sent to each enabled endpoint subscribed to this type. Verify webhook-signature (Standard Webhooks v1: ' +
          'base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`) and deduplicate on webhook-id.',
        parameters: [
          {
            name: 'webhook-id',
            in: 'header',
            required: true,
            schema: { type: 'string' },
            description: 'equals the body id',
          },
          {
            name: 'webhook-timestamp',
            in: 'header',
            required: true,
            schema: { type: 'string' },
            description: 'Unix seconds',
          },
          {
            name: 'webhook-signature',
            in: 'header',
            required: true,
            schema: { type: 'string' },
            description: 'space-separated v1,<base64>',
          },
        ],
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: eventRefs[type] } } } },
        responses: { '200': { description: 'any 2xx acknowledges the delivery' } },
      },
    };
  }

  components['WebhookEvent'] = {
    description: 'The body of any webhook: the envelope of one of the event types, told apart by `type`.',
    oneOf: Object.values(eventRefs).map(($ref) => ({ $ref })),
    discriminator: { propertyName: 'type', mapping: eventRefs },
  };
  components['Error'] = lift(JSON.parse(JSON.stringify(ErrorEnvelopeSchema)) as Json, components, false);
  const responses: Record<string, Json> = {};
  for (const [status, description] of Object.entries(ERROR_RESPONSES)) {
    responses[`E${status}`] = {
      description,
      headers: refHeaders(),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Affiliate Program API',
      version: '1.0.0',
      description:
        'Affiliates with multi-level lineage, commissions, and conversion events attributed by referral cookie or coupon. ' +
        'Every request carries `Authorization: Bearer svc_…`; keys are tenant-scoped and need the Growth plan or higher.',
    },
    servers: [{ url: serverUrl, description: 'the platform gateway (PUBLIC_BASE_URL)' }],
    tags: [...new Set(operations.map((o) => o.tag)), 'Tracking', 'Onboarding page', 'Meta'].map((name) => ({ name })),
    paths,
    webhooks,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'an API key: svc_ followed by 43 characters' },
      },
      headers: Object.fromEntries(Object.entries(RATE_HEADERS).map(([k, v]) => [k, v])),
      responses,
      schemas: components,
    },
  };
}

/**
 * The public referral-tracking routes of the gateway (tracking-routes.ts): no key, so no RateLimit-* headers and
 * their own 429 (per client address, TRACKING_RATE_LIMIT_PER_MIN).
 */
function trackingPaths(toJson: (s: TSchema) => Json): Record<string, Record<string, Json>> {
  const error = (description: string): Json => ({
    description,
    headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  });
  const limited = error(
    'RATE_LIMITED: this address recorded TRACKING_RATE_LIMIT_PER_MIN visits in the last minute; see Retry-After',
  );
  const unavailable = error('UNAVAILABLE: the events service did not answer in time');
  const slug = {
    name: 'slug',
    in: 'path',
    required: true,
    description: "an approved affiliate's slug",
    schema: { type: 'string' },
  };
  const redirect = (description: string): Json => ({
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
    },
  });
  const referral = (summary: string, parameters: Json[]): Record<string, Json> => ({
    get: {
      operationId: parameters.length === 2 ? 'followReferralLink' : 'followReferralLinkOnTrackingHost',
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
    },
  });
  return {
    '/r/{merchant_id}/{slug}': referral('Follow a referral link', [
      { name: 'merchant_id', in: 'path', required: true, description: 'the merchant', schema: { type: 'string' } },
      slug,
    ]),
    '/r/{slug}': referral("Follow a referral link on the merchant's tracking_host (the merchant is found by Host)", [
      slug,
    ]),
    '/t/script.js': {
      get: {
        operationId: 'getTrackingScript',
        summary: 'The tracking script merchants embed (data-merchant, optional data-fingerprint)',
        tags: ['Tracking'],
        security: [],
        responses: {
          '200': {
            description: `on a page opened with ?via={slug}, records the visit with POST /t/visit and sets ${VISIT_COOKIE}`,
            content: { 'application/javascript': { schema: { type: 'string' } } },
          },
        },
      },
    },
    '/t/visit': {
      post: {
        operationId: 'recordVisit',
        summary: 'Record a visit (called by the tracking script)',
        tags: ['Tracking'],
        description: 'Public, no key; CORS open to any origin, without credentials. Body at most 8 KiB.',
        security: [],
        requestBody: { required: true, content: { 'application/json': { schema: toJson(TrackVisitBody) } } },
        responses: {
          '200': {
            description: "the browser's current visit is kept",
            content: { 'application/json': { schema: toJson(TrackedVisit) } },
          },
          '201': {
            description: 'a visit is recorded',
            content: { 'application/json': { schema: toJson(TrackedVisit) } },
          },
          '400': error('INVALID_INPUT: see error.details'),
          '404': error('NOT_FOUND: unknown merchant or slug, or an affiliate not approved'),
          '413': error('INVALID_INPUT: the body exceeds 8 KiB'),
          '415': error('INVALID_INPUT: the body is not JSON'),
          '429': limited,
          '503': unavailable,
        },
      },
      options: {
        operationId: 'recordVisitPreflight',
        summary: 'CORS preflight of POST /t/visit',
        tags: ['Tracking'],
        security: [],
        responses: {
          '204': { description: 'Access-Control-Allow-Methods: POST, -Headers: Content-Type, -Max-Age: 86400' },
        },
      },
    },
  };
}

function refHeaders(): Json {
  return Object.fromEntries(Object.keys(RATE_HEADERS).map((h) => [h, { $ref: `#/components/headers/${h}` }]));
}

export function objectParameters(schema: TObject, where: 'path' | 'query', toJson: (s: TSchema) => Json): Json[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, prop]) => {
    const json = toJson(prop);
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(typeof json['description'] === 'string' ? { description: json['description'] } : {}),
      schema: json,
    };
  });
}

/** Moves every nested schema that has a $id into components and leaves a $ref in its place. */
export function lift(node: Json, components: Record<string, Json>, replaceRoot: boolean): Json {
  const walk = (value: unknown, isRoot: boolean): unknown => {
    if (Array.isArray(value)) return value.map((v) => walk(v, false));
    if (!value || typeof value !== 'object') return value;
    const obj = value as Json;
    const out: Json = {};
    for (const [k, v] of Object.entries(obj))
      if (k !== '$id') out[k] = k === 'examples' || k === 'default' ? v : walk(v, false);
    const id = obj['$id'];
    if (typeof id === 'string' && (!isRoot || replaceRoot)) {
      components[id] ??= out;
      return { $ref: `#/components/schemas/${id}` };
    }
    return out;
  };
  return walk(node, true) as Json;
}
