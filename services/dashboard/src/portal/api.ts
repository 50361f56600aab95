import { RequestFailed } from '../api.ts';

/**
 * The portal's API (/portal/api, docs/PORTAL.md and the contract H2 serves): the answers' shapes, and one request
 * function that sends the session's CSRF token on every change and reports an ended session.
 */
export interface Programme {
  affiliate_id: string;
  merchant_name: string;
}

export interface PortalSession {
  email: string;
  csrf_token: string;
  embedded: boolean;
  return_url: string | null;
  affiliate: { id: string; display_name: string; status: string };
  programme: { merchant_name: string; currency: string; slug: string | null };
  programmes: Programme[];
}

export interface Home {
  referral_link: string;
  coupons: { code: string }[];
  currency: string;
  this_month: { clicks: number; conversions: number; earnings: string };
}

export interface Performance {
  group_by: string;
  start: string;
  end: string;
  timezone: string;
  currency: string;
  data: { key: string; clicks: number; conversions: number; revenue: string; commissions: string }[];
}

export interface Commission {
  id: string;
  status: string;
  amount: string;
  currency: string;
  created_at: string;
  order: string | null;
}

export interface Payout {
  id: string;
  status: string;
  amount: string;
  currency: string;
  method: string | null;
  created_at: string;
  paid_at: string | null;
}

export interface Paged<T> {
  data: T[];
  has_more: boolean;
  /** The cursor to pass as `starting_after` for the next page, where the answer gives one. */
  next_cursor?: string | null;
}

export interface TaxFormSummary {
  id: string;
  type: string;
  status: string;
  signed_at: string | null;
  expires_at: string | null;
}

export type MaskedDetails = Record<string, string | null>;

export interface PayoutSettings {
  payout_details: MaskedDetails | null;
  tax_forms: TaxFormSummary[];
  can_change_payout_details: boolean;
  can_change_until: string | null;
}

export interface Team {
  recruit_link: string | null;
  children: number;
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
