import type { Queryable } from '@platform/shared/db';

export interface TierRow {
  id: string;
  rate: string;
  threshold: string;
}

export async function setAffiliateTier(
  sql: Queryable,
  merchantId: string,
  affiliateId: string,
  tierId: string,
  at: Date,
): Promise<void> {
  await sql`
    update affiliates set tier_id = ${tierId}, updated_at = ${at}
    where merchant_id = ${merchantId} and id = ${affiliateId}`;
}
