import { RequestFailed } from '../api.ts';
import type { components } from '../generated/portal-api.ts';

/**
 * The portal's API (/portal/api, docs/PORTAL.md): the answers' shapes, generated (services/dashboard/build.ts) from
 * the OpenAPI document the gateway serves at /portal/api/openapi, and one request function that sends the session's
 * CSRF token on every change and reports an ended session.
 */
type Schemas = components['schemas'];
export type PortalSession = Schemas['PortalSession'];
export type Home = Schemas['PortalHome'];
export type Performance = Schemas['PortalPerformance'];
export type Commission = Schemas['PortalCommission'];
export type Payout = Schemas['PortalPayout'];
export type PayoutSettings = Schemas['PortalPayoutSettings'];
export type MaskedDetails = Schemas['PayoutDetails'];
export type Team = Schemas['PortalTeam'];

/** A page of a portal list (PortalCommissionPage, PortalPayoutPage). */
export interface Paged<T> {
  data: T[];
  has_more: boolean;
  /** The cursor to pass as `starting_after` for the next page, where the answer gives one. */
  next_cursor?: string | null;
}

let csrf = '';
let onSignedOut: () => void = () => {};

/** The session's CSRF token for changes, and what an answer of 401 (the session ended) does. */
export function setPortalAuth(token: string, signedOut: () => void): void {
  csrf = token;
  onSignedOut = signedOut;
}

/** A call to /portal/api: the answer's JSON, or RequestFailed with the API's error in words. */
export async function portal<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (method !== 'GET') headers['x-portal-csrf'] = csrf;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(`/portal/api${path}`, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    // No answer (offline): the failure in words, the network error kept as its cause.
    throw new RequestFailed(undefined, { cause: err });
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (res.status === 401 && path !== '/session') onSignedOut();
  if (!res.ok) throw new RequestFailed(json);
  return json as T;
}

/** A page of a list the portal answers with `has_more`: the shape the dashboard's paged tables take. */
export async function portalPage<T extends { id: string }>(path: string, cursor: string | undefined) {
  const query = new URLSearchParams({ limit: '25', ...(cursor ? { starting_after: cursor } : {}) });
  const page = await portal<Paged<T>>('GET', `${path}?${query}`);
  // The next page starts after the cursor the answer gives, or else after the last row's id (the contract's words).
  const next = page.next_cursor ?? page.data.at(-1)?.id ?? null;
  return { data: page.data, next_cursor: page.has_more ? next : null };
}
