import { isDatabaseUnavailable } from '@platform/shared/db';
import { invalidRequest, StripeError, type PaymentsRpcError } from '@platform/shared/payments/errors';
import type { ErrorFormat } from '@platform/shared/request-server';
import type { ErrorObject, InputRefusals } from '@platform/shared/validation';

const unavailable: PaymentsRpcError = {
  status: 503,
  error: { type: 'api_error', message: 'The service is temporarily unavailable; try again' },
};
const internal: PaymentsRpcError = {
  status: 500,
  error: { type: 'api_error', message: 'Something went wrong on our side' },
};

/**
 * The /v1 surface's errors, in Stripe's shape: what the request server answers for a failure (a StripeError as its
 * status and error object, a database outage 503 `api_error`, anything else 500 without detail), and what the shared
 * validator answers for refused parameters, worded as Stripe words them.
 */
export const stripeErrors: ErrorFormat = {
  refusal(err, log) {
    let refusal: PaymentsRpcError;
    if (err instanceof StripeError) refusal = { status: err.status, error: err.body };
    else if (isDatabaseUnavailable(err)) {
      log.warn('operation failed: database unavailable', { err });
      refusal = unavailable;
    } else {
      log.error('operation failed', { err: err as Error });
      refusal = internal;
    }
    // Refusals below 500 are the caller's to see again; one on our side is not kept (a retry must do the work).
    return { code: refusal.error.code ?? String(refusal.status), body: refusal, final: refusal.status < 500 };
  },
  internal,
  unavailable: { code: '503', body: unavailable },
};

/** `/transfer_data/destination` → `transfer_data[destination]`, the way a form names the parameter. */
function bracketName(pointer: string, extra?: string): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  return parts.map((p, i) => (i === 0 ? p : `[${p}]`)).join('');
}

/** The first problem the schema found, as Stripe answers it. */
function refusal(e: ErrorObject) {
  if (e.keyword === 'required') {
    const param = bracketName(e.instancePath, String(e.params['missingProperty']));
    return invalidRequest(`Missing required param: ${param}.`, { code: 'parameter_missing', param });
  }
  if (e.keyword === 'additionalProperties') {
    const param = bracketName(e.instancePath, String(e.params['additionalProperty']));
    return invalidRequest(`Received unknown parameter: ${param}`, { code: 'parameter_unknown', param });
  }
  const param = bracketName(e.instancePath);
  if (e.keyword === 'type' && e.params['type'] === 'integer')
    return invalidRequest(`Invalid integer: ${param}`, { code: 'parameter_invalid_integer', param });
  if (e.keyword === 'const' || e.keyword === 'anyOf')
    return invalidRequest(`Invalid ${param}: not one of the values this parameter takes`, { param });
  return invalidRequest(`Invalid ${param}: ${e.message ?? 'is invalid'}`, { param });
}

/** Form parameters refused (validation.ts): the first problem found, in Stripe's words. */
export const stripeRefusals: InputRefusals = {
  nul: () => invalidRequest('Parameters may not contain NUL characters', { code: 'parameter_invalid_string' }),
  invalid: (errors) => refusal(errors[0]!),
};

/** The refusals of a list's cursors (objectIdPage in cursor.ts), in Stripe's words. */
export const stripeListRefusals = {
  both: () =>
    invalidRequest('You may only specify one of these parameters: ending_before, starting_after.', {
      code: 'parameters_exclusive',
      param: 'ending_before',
    }),
  unknown: (cursor: 'after' | 'before', id: string) =>
    invalidRequest(`No such object: '${id}'`, {
      code: 'resource_missing',
      param: cursor === 'after' ? 'starting_after' : 'ending_before',
      status: 400,
    }),
};
