import { Type } from '@sinclair/typebox';

/** The closed set of error codes. HTTP statuses are assigned only at the gateway's edge. */
export const ERROR_CODES = [
  'UNAUTHORIZED',
  'FORBIDDEN',
  'PLAN_REQUIRED',
  'RATE_LIMITED',
  'INVALID_INPUT',
  'NOT_FOUND',
  'CONFLICT',
  'INTERNAL',
  'UNAVAILABLE',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorDetail {
  path: string;
  message: string;
}

export const ErrorDetailSchema = Type.Object(
  {
    path: Type.String({
      description:
        'the offending input: a field or query parameter by name ("email", "limit", "cursor"), dotted when nested ("payload.plan"), "body" for the body as a whole',
      examples: ['email'],
    }),
    message: Type.String({ description: 'what is wrong with it', examples: ['must match format "email"'] }),
  },
  { additionalProperties: false },
);

export const ErrorEnvelopeSchema = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.Union(
          ERROR_CODES.map((c) => Type.Literal(c)),
          { description: 'machine-readable code' },
        ),
        message: Type.String({ description: 'human-readable explanation', examples: ['No such affiliate'] }),
        request_id: Type.String({
          description: 'the x-request-id of the request',
          examples: ['req_01JD3T6M0S2E4W5X6Y7Z8A9B0C'],
        }),
        details: Type.Optional(Type.Array(ErrorDetailSchema, { description: 'per-field problems (INVALID_INPUT)' })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, $id: 'Error' },
);

/** A failure the caller should see, as opposed to a bug (which becomes INTERNAL). */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;

  constructor(code: ErrorCode, message: string, details?: ErrorDetail[], options?: ErrorOptions) {
    super(message, options);
    this.name = 'ApiError';
    this.code = code;
    this.details = details;
  }
}

export const invalidInput = (path: string, message: string, options?: ErrorOptions): ApiError =>
  new ApiError('INVALID_INPUT', 'The request is invalid', [{ path, message }], options);

export const notFound = (what: string): ApiError => new ApiError('NOT_FOUND', `No such ${what}`);

/**
 * The one rule for a status change, on every resource that has status moves: a status that is none of the
 * resource's is INVALID_INPUT (its schema says so); one of them that its current status may not move to is this
 * CONFLICT, naming both and the moves there are ("A paid payout cannot move to pending; paid is final").
 */
export const moveRefused = (what: string, from: string, to: string, allowed: readonly string[]): ApiError =>
  new ApiError('CONFLICT', moveRefusedMessage(what, from, to, allowed));

export function moveRefusedMessage(what: string, from: string, to: string, allowed: readonly string[]): string {
  const moves = allowed.length ? `allowed moves from ${from}: ${allowed.join(', ')}` : `${from} is final`;
  return `${/^[aeiou]/.test(from) ? 'An' : 'A'} ${from} ${what} cannot move to ${to}; ${moves}`;
}
