import { randomBytes } from 'node:crypto';
import { hashApiKey } from './crypto.ts';
import type { Queryable } from './db.ts';

/**
 * The affiliate portal's single-use links (migration 062): 256 random bits in the URL, only their SHA-256 stored.
 * Made where the cause happens (the affiliates service approving an application mails a sign-in link in the same
 * transaction; the gateway's portal sign-in page; the portal_sessions API) and redeemed by the gateway's portal.
 */
export type PortalLinkPurpose = 'sign_in' | 'embed' | 'payout_details';

export const PORTAL_LINK_LIFETIME_MS: Record<PortalLinkPurpose, number> = {
  sign_in: 15 * 60_000,
  embed: 5 * 60_000,
  payout_details: 15 * 60_000,
};

export interface NewPortalLink {
  purpose: PortalLinkPurpose;
  email: string;
  merchantId: string;
  affiliateId: string;
  returnUrl?: string | null;
}

export interface PortalLink {
  purpose: PortalLinkPurpose;
  email: string;
  merchantId: string;
  affiliateId: string;
  returnUrl: string | null;
}

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** Records a link in the caller's transaction; answers the token (to put in a URL, never stored) and its expiry. */
export async function createPortalLink(
  tx: Queryable,
  link: NewPortalLink,
): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + PORTAL_LINK_LIFETIME_MS[link.purpose]);
  await tx`
    insert into portal_links (token_hash, purpose, email, merchant_id, affiliate_id, return_url, expires_at)
    values (${hashApiKey(token)}, ${link.purpose}, ${link.email.toLowerCase()}, ${link.merchantId},
            ${link.affiliateId}, ${link.returnUrl ?? null}, ${expiresAt})`;
  // Expired links of anyone are removed as new ones are made: the table stays the size of the live ones.
  await tx`delete from portal_links where expires_at < now() - interval '1 day'`;
  return { token, expiresAt };
}

/** The URL that redeems a link: the gateway's /portal/link/{token}. */
export const portalLinkUrl = (publicBaseUrl: string, token: string) =>
  `${publicBaseUrl.replace(/\/+$/, '')}/portal/link/${token}`;

/**
 * What a link is for, while it can still be used (null when used, expired or unknown), without using it: the
 * gateway's page that asks the person to continue reads it.
 */
export async function peekPortalLink(sql: Queryable, token: string): Promise<PortalLinkPurpose | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  const [row] = await sql<{ purpose: PortalLinkPurpose }[]>`
    select purpose from portal_links
    where token_hash = ${hashApiKey(token)} and used_at is null and expires_at > now()`;
  return row?.purpose ?? null;
}

/**
 * Uses a link once: the first caller gets it, a second (or an expired or unknown token) gets null. The claim is one
 * conditional UPDATE, so two tabs opening the same link at once cannot both sign in.
 */
export async function redeemPortalLink(tx: Queryable, token: string): Promise<PortalLink | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  const [row] = await tx<
    {
      purpose: PortalLinkPurpose;
      email: string;
      merchant_id: string;
      affiliate_id: string;
      return_url: string | null;
    }[]
  >`
    update portal_links set used_at = now()
    where token_hash = ${hashApiKey(token)} and used_at is null and expires_at > now()
    returning purpose, email, merchant_id, affiliate_id, return_url`;
  if (!row) return null;
  return {
    purpose: row.purpose,
    email: row.email,
    merchantId: row.merchant_id,
    affiliateId: row.affiliate_id,
    returnUrl: row.return_url,
  };
}
