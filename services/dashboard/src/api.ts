import createClient, { type Middleware } from 'openapi-fetch';
import type { components as DashboardSchemas, paths as DashboardPaths } from './generated/dashboard-api.ts';
import type { components as PublicSchemas, paths as PublicPaths } from './generated/public-api.ts';

/**
 * The two typed clients: the public API (/api/v1, the same operations a merchant's key calls, here authorised by the
 * session cookie) and the dashboard's own API (/dashboard/api). Their types are generated from the gateway's OpenAPI
 * documents at build time, so a changed schema fails the dashboard's type check instead of drifting.
 */
export type Schemas = PublicSchemas['schemas'];
export type DashboardSchema = DashboardSchemas['schemas'];
export type Session = DashboardSchema['DashboardSession'];

let csrfToken = '';
let onSignedOut: () => void = () => {};

export function setSessionAuth(token: string, signedOut: () => void): void {
  csrfToken = token;
  onSignedOut = signedOut;
}

const session: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET') request.headers.set('X-CSRF-Token', csrfToken);
    return request;
  },
  onResponse({ response, request }) {
    // An ended or expired session: back to the sign-in page (not for the sign-in request itself).
    if (response.status === 401 && !request.url.endsWith('/dashboard/api/session')) onSignedOut();
    return response;
  },
  // No answer (offline): the failure in words, like a refusal's, the network error kept as its cause.
  onError({ error }) {
    return new RequestFailed(undefined, { cause: error });
  },
};

const options = { baseUrl: location.origin, credentials: 'same-origin' as const };
export const api = createClient<PublicPaths>(options);
export const dash = createClient<DashboardPaths>(options);
api.use(session);
dash.use(session);

interface ErrorDetail {
  path: string;
  message: string;
}

interface ErrorBody {
  error?: { code?: string; message?: string; details?: ErrorDetail[] };
}

/**
 * A refused or failed request: the message in words, and the API's per-field problems (INVALID_INPUT). `body` is the
 * error answer (none when no answer came: `cause` then says why).
 */
export class RequestFailed extends Error {
  readonly details: ErrorDetail[];
  constructor(body: unknown, options?: ErrorOptions) {
    super(errorText(body), options);
    const e = (body as ErrorBody | undefined)?.error;
    this.name = 'RequestFailed';
    this.details = e?.details ?? [];
  }
}

/** An API error in words: the message, and which field is wrong and why. */
function errorText(error: unknown): string {
  const e = (error as ErrorBody | undefined)?.error;
  if (!e) return 'The request failed; check the connection and try again.';
  const details = e.details?.map((d) => `${d.path} ${d.message}`).join('; ');
  return details ? `${e.message ?? 'Invalid input'}: ${details}` : (e.message ?? 'The request failed.');
}

/** Throws the error in words (with its details), so that callers handle one kind of failure. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || !result.response.ok) throw new RequestFailed(result.error);
  return result.data as T;
}
