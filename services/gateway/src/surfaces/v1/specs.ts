import type { TSchema } from '@sinclair/typebox';
import { StripeErrorSchema } from '@platform/shared/payments/errors';
import { paymentsOperations, type PaymentsOperation } from '@platform/shared/payments/operations';
import type { ParameterSpec, RouteSpec, SurfaceSpec } from '../../http/openapi/spec.ts';

/**
 * The platform payment API's surface (/v1): its route specs are the payments catalogue (shared/src/payments), in
 * Stripe's wire conventions (form bodies, bracket notation, Stripe-Account), answered by one handler that forwards
 * to the payments service (router.ts). Every route takes the platform key, the surface's default security.
 */

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

const STRIPE_ACCOUNT: ParameterSpec = {
  name: 'Stripe-Account',
  in: 'header',
  required: false,
  description: 'act for this connected account (acct_…) instead of the platform',
  schema: { type: 'string', pattern: '^acct_[0-9a-z]+$' },
};

const IDEMPOTENCY_KEY: ParameterSpec = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: 'the same key with the same parameters within 24 hours answers the first response again',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

export function paymentsSpec(op: PaymentsOperation): RouteSpec {
  const params = op.params.properties as Record<string, TSchema>;
  const required = new Set(op.params.required ?? []);
  const parameters: ParameterSpec[] = [STRIPE_ACCOUNT];
  if (op.path.includes('{id}')) parameters.push({ name: 'id', in: 'path', required: true, schema: { type: 'string' } });
  if (op.method === 'post') parameters.push(IDEMPOTENCY_KEY);
  if (op.method === 'get')
    for (const [name, schema] of Object.entries(params))
      parameters.push({
        name,
        in: 'query',
        required: required.has(name),
        ...(name === 'created' ? { style: 'deepObject', explode: true } : {}),
        schema,
      });
  const errors = Object.entries(ERRORS).filter(([status]) => op.method === 'post' || !['402', '409'].includes(status));
  return {
    operationId: op.name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()),
    method: op.method,
    path: op.path,
    summary: op.summary,
    tags: ['payments'],
    parameters,
    ...(op.method === 'post'
      ? {
          body: {
            contentType: 'application/x-www-form-urlencoded',
            schema: op.params,
            required: required.size > 0,
            description:
              "form-encoded, nested objects in bracket notation (metadata[order]=1); Stripe's client libraries send this",
            encoding: {
              metadata: { style: 'deepObject', explode: true },
              transfer_data: { style: 'deepObject', explode: true },
            },
          },
        }
      : {}),
    responses: {
      '200': { description: op.description, content: { 'application/json': op.response } },
      ...Object.fromEntries(
        errors.map(([status, description]) => [
          status,
          { description, content: { 'application/json': { $ref: '#/components/schemas/StripeError' } } },
        ]),
      ),
    },
  };
}

/** The surface of GET /v1/openapi, with `serverUrl` (PUBLIC_BASE_URL) as its server. */
export function paymentsSurface(serverUrl: string): SurfaceSpec {
  return {
    info: {
      title: 'Platform payment API',
      version: '1',
      description:
        "Connected accounts, onboarding links, payment intents, balance transactions and payouts in Stripe's wire conventions, so that Stripe's client libraries work against it (docs/PAYMENTS.md).",
    },
    servers: [{ url: serverUrl }],
    security: [{ platformKey: [] }],
    securitySchemes: {
      platformKey: {
        type: 'http',
        scheme: 'bearer',
        description: 'sk_test_… (test data) or sk_live_… (live data), made with `admin platform-key create`',
      },
    },
    routes: paymentsOperations.map(paymentsSpec),
    schemas: { StripeError: StripeErrorSchema },
  };
}
