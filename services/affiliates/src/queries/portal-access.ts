import type { Queryable } from '@platform/shared/db';

/**
 * Ends an affiliate's way into the portal (docs/PORTAL.md) when it is suspended or rejected, in the transaction of
 * the move: its sessions end and its unused links are spent. A later re-approval then brings back nothing that was
 * open before (a session taken over, say, is why a merchant suspends).
 */
export async function endPortalAccess(tx: Queryable, merchantId: string, affiliateId: string): Promise<void> {
  await tx`delete from portal_sessions where merchant_id = ${merchantId} and affiliate_id = ${affiliateId}`;
  await tx`
    update portal_links set used_at = now()
    where merchant_id = ${merchantId} and affiliate_id = ${affiliateId} and used_at is null`;
}
