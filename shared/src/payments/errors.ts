import { Type, type Static } from '@sinclair/typebox';

/**
 * The error object of the platform payment API (/v1), in Stripe's shape, so that Stripe's client libraries raise
 * their own error classes for it (StripeCardError for `card_error`, StripeInvalidRequestError, …). `status` travels
 * between the payments service and the gateway only: the HTTP status is taken from it and it is not in the body.
 */
export const STRIPE_ERROR_TYPES = ['api_error', 'card_error', 'idempotency_error', 'invalid_request_error'] as const;

export const StripeErrorSchema = Type.Object(
  {
    error: Type.Object(
      {
        type: Type.Union(
          STRIPE_ERROR_TYPES.map((t) => Type.Literal(t)),
          { description: 'the kind of error' },
        ),
        code: Type.Optional(
          Type.String({ description: 'machine-readable code, where there is one', examples: ['resource_missing'] }),
        ),
        message: Type.String({ description: 'human-readable explanation', examples: ["No such payout: 'po_123'"] }),
        param: Type.Optional(
          Type.String({ description: 'the parameter at fault, in bracket notation', examples: ['metadata[order]'] }),
        ),
        decline_code: Type.Optional(Type.String({ description: 'card errors: why the card was declined' })),
        payment_intent: Type.Optional(Type.Unknown({ description: 'card errors: the PaymentIntent as it now is' })),
        request_log_url: Type.Optional(Type.String()),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, $id: 'StripeError', description: 'Every /v1 error' },
);
export type StripeErrorBody = Static<typeof StripeErrorSchema>['error'];

/** A refusal with its HTTP status, raised by the payments service and formatted by the gateway. */
export class StripeError extends Error {
  readonly status: number;
  readonly body: StripeErrorBody;

  constructor(status: number, body: StripeErrorBody, options?: ErrorOptions) {
    super(body.message, options);
    this.name = 'StripeError';
    this.status = status;
    this.body = body;
  }
}

export const invalidRequest = (
  message: string,
  opts: { code?: string; param?: string; status?: number; cause?: unknown } = {},
) =>
  new StripeError(
    opts.status ?? 400,
    {
      type: 'invalid_request_error',
      message,
      ...(opts.code ? { code: opts.code } : {}),
      ...(opts.param ? { param: opts.param } : {}),
    },
    opts.cause === undefined ? undefined : { cause: opts.cause },
  );

/** Stripe's answer for an id that names nothing this key (and this Stripe-Account) may see. */
export const resourceMissing = (kind: string, id: string, param = 'id') =>
  invalidRequest(`No such ${kind}: '${id}'`, { code: 'resource_missing', param, status: 404 });

/** What the payments service answers over NATS for a refusal: the status beside Stripe's error object. */
export interface PaymentsRpcError {
  status: number;
  error: StripeErrorBody;
}
