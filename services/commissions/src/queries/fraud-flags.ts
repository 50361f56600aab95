import type { Queryable } from '@platform/shared/db';

export type FraudRule = 'self_referral' | 'own_fingerprint' | 'conversion_velocity';

/** Records a flag unless this event already has one for this rule; true when it was recorded now. */
export async function insertFraudFlag(
  sql: Queryable,
  f: {
    merchantId: string;
    affiliateId: string;
    eventId: string;
    rule: FraudRule;
    details: Record<string, unknown>;
    at: Date;
  },
): Promise<boolean> {
  const rows = await sql`
    insert into fraud_flags (merchant_id, affiliate_id, event_id, rule, details, created_at)
    values (${f.merchantId}, ${f.affiliateId}, ${f.eventId}, ${f.rule}, ${sql.json(f.details as never)}, ${f.at})
    on conflict (merchant_id, event_id, rule) where event_id is not null do nothing
    returning 1`;
  return rows.length === 1;
}
