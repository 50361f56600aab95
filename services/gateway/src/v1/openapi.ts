import type { TSchema } from '@sinclair/typebox';
import { StripeErrorSchema } from '@platform/shared/payments/errors';
import { paymentsOperations, type PaymentsOperation } from '@platform/shared/payments/operations';

type Json = Record<string, unknown>;

const ERRORS: Record<string, string> = {
  '400':
    'invalid_request_error: a parameter is missing, unknown or invalid (see error.param); balance_insufficient; idempotency_error',
  '401': 'no platform key, or one that is unknown or revoked',
  '402': 'card_error: the card was declined (error.payment_intent is the intent as it now is)',
  '403': 'account_invalid: the Stripe-Account names no connected account this key may act for',
  '404': 'resource_missing: no such object for this key and Stripe-Account',
  '409': 'idempotency_error: the first request with this Idempotency-Key is still running',
  '429': 'rate_limit: the key exceeded its requests per minute; see Retry-After',
  '500': 'api_error: an unexpected failure',
  '503': 'api_error: a dependency is down; see Retry-After',
};

/**
 * Schemas with an $id become components, referenced where they are used (recursively), so that each is written once.
 */
function componentize(schema: unknown, components: Json): unknown {
  if (Array.isArray(schema)) return schema.map((s) => componentize(s, components));
  if (!schema || typeof schema !== 'object') return schema;
  const { $id, ...rest } = schema as Json;
  const walked = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, componentize(v, components)]));
  if (typeof $id !== 'string') return walked;
  components[$id] ??= walked;
  return { $ref: `#/components/schemas/${$id}` };
}

function operationObject(op: PaymentsOperation, components: Json): Json {
  const params = op.params.properties as Record<string, TSchema>;
  const required = new Set(op.params.required ?? []);
  const parameters: Json[] = [
    {
      name: 'Stripe-Account',
      in: 'header',
      required: false,
      description: 'act for this connected account (acct_…) instead of the platform',
      schema: { type: 'string', pattern: '^acct_[0-9a-z]+$' },
    },
  ];
  if (op.path.includes('{id}')) parameters.push({ name: 'id', in: 'path', required: true, schema: { type: 'string' } });
  if (op.method === 'post')
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: 'the same key with the same parameters within 24 hours answers the first response again',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    });
  const result: Json = {
    operationId: op.name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()),
    summary: op.summary,
    tags: ['payments'],
    parameters,
    responses: {
      '200': {
        description: op.description,
        content: { 'application/json': { schema: componentize(op.response, components) } },
      },
      ...Object.fromEntries(
        Object.entries(ERRORS)
          .filter(([status]) => op.method === 'post' || !['402', '409'].includes(status))
          .map(([status, description]) => [
            status,
            { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/StripeError' } } } },
          ]),
      ),
    },
  };
  if (op.method === 'get') {
    for (const [name, schema] of Object.entries(params))
      parameters.push({
        name,
        in: 'query',
        required: required.has(name),
        ...(name === 'created' ? { style: 'deepObject', explode: true } : {}),
        schema: componentize(schema, components),
      });
  } else {
    result['requestBody'] = {
      required: required.size > 0,
      description:
        "form-encoded, nested objects in bracket notation (metadata[order]=1); Stripe's client libraries send this",
      content: {
        'application/x-www-form-urlencoded': {
          schema: componentize(op.params, components),
          encoding: {
            metadata: { style: 'deepObject', explode: true },
            transfer_data: { style: 'deepObject', explode: true },
          },
        },
      },
    };
  }
  return result;
}

/** The OpenAPI 3.1 document of the platform payment API, from the schemas the payments service validates with. */
export function buildPaymentsOpenApi(publicBaseUrl: string): Json {
  const components: Json = { StripeError: componentize({ ...StripeErrorSchema, $id: undefined }, {}) };
  const paths: Record<string, Json> = {};
  for (const op of paymentsOperations) {
    const path = (paths[op.path] ??= {});
    path[op.method] = operationObject(op, components);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Platform payment API',
      version: '1',
      description:
        "Connected accounts, onboarding links, payment intents, balance transactions and payouts in Stripe's wire conventions, so that Stripe's client libraries work against it (docs/PAYMENTS.md).",
    },
    servers: [{ url: publicBaseUrl }],
    security: [{ platformKey: [] }],
    paths,
    components: {
      securitySchemes: {
        platformKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'sk_test_… (test data) or sk_live_… (live data), made with `admin platform-key create`',
        },
      },
      schemas: components,
    },
  };
}
