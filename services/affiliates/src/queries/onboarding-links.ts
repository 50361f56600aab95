import type { Queryable } from '@platform/shared/db';

/** How many visitor ids an affiliate keeps for the own-fingerprint rule: the latest, the oldest drop out. */
const VISITOR_IDS_KEPT = 50;

export async function insertOnboardingLink(
  sql: Queryable,
  l: { id: string; tokenHash: Buffer; merchantId: string; affiliateId: string; expiresAt: Date },
): Promise<void> {
  await sql`
    insert into onboarding_links (id, token_hash, merchant_id, affiliate_id, expires_at)
    values (${l.id}, ${l.tokenHash}, ${l.merchantId}, ${l.affiliateId}, ${l.expiresAt})`;
}

/**
 * Revokes the affiliate's links still open but the one kept (the link just made or being used): only one link at a
 * time can store payout details, so that an older one left in a mailbox cannot overwrite them. The caller holds the
 * affiliate's lock (queries/tax-forms.ts lockAffiliate), taken before any link's, so that two links used at once
 * queue on the affiliate and never lock each other's rows in opposite orders.
 */
export async function revokeOtherOpenLinks(
  sql: Queryable,
  merchantId: string,
  affiliateId: string,
  keptTokenHash: Buffer,
): Promise<number> {
  const revoked = await sql`
    update onboarding_links set revoked_at = date_trunc('milliseconds', now())
    where merchant_id = ${merchantId} and affiliate_id = ${affiliateId} and token_hash <> ${keptTokenHash}
      and used_at is null and revoked_at is null and expires_at > now()`;
  return revoked.count;
}

export interface OnboardingLinkRow {
  /** obl_…; null for links made before links had ids. */
  id: string | null;
  merchant_id: string;
  affiliate_id: string;
  affiliate_name: string;
  merchant_name: string;
  expires_at: Date;
  used_at: Date | null;
  revoked_at: Date | null;
  expired: boolean;
}

/** The link whose token hashes to `tokenHash` (locked when `forUpdate`: it is being used), with whom it is for. */
export async function findOnboardingLink(
  sql: Queryable,
  tokenHash: Buffer,
  forUpdate = false,
): Promise<OnboardingLinkRow | undefined> {
  const [row] = await sql<OnboardingLinkRow[]>`
    select l.id, l.merchant_id, l.affiliate_id, a.display_name as affiliate_name, m.name as merchant_name,
           l.expires_at, l.used_at, l.revoked_at, l.expires_at <= now() as expired
    from onboarding_links l
    join affiliates a on a.merchant_id = l.merchant_id and a.id = l.affiliate_id
    join merchants m on m.id = l.merchant_id
    where l.token_hash = ${tokenHash}
    ${forUpdate ? sql`for update of l` : sql``}`;
  return row;
}

export async function markOnboardingLinkUsed(sql: Queryable, tokenHash: Buffer): Promise<void> {
  await sql`update onboarding_links set used_at = date_trunc('milliseconds', now()) where token_hash = ${tokenHash}`;
}

/** Adds a visitor id (the browser's `_svc_sess` visit) to the affiliate's own, once; the fraud rules compare with them. */
export async function addVisitorId(
  sql: Queryable,
  merchantId: string,
  affiliateId: string,
  visitorId: string,
): Promise<void> {
  await sql`
    update affiliates
    set fingerprint_visitor_ids = (array_remove(fingerprint_visitor_ids, ${visitorId}) || array[${visitorId}::text])[
          greatest(1, cardinality(array_remove(fingerprint_visitor_ids, ${visitorId})) + 2 - ${VISITOR_IDS_KEPT}):]
    where merchant_id = ${merchantId} and id = ${affiliateId}`;
}
