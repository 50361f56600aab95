import type { Queryable } from './db.ts';
import { newId } from './ids.ts';

/**
 * What the platform operator's endpoint hears of billing (docs/BILLING.md), recorded in the transaction of the change
 * so that an event exists exactly when its change committed; the gateway's billing job sends it (billing-events.ts).
 * Shared because the operator CLI's approval records one too.
 */
export type BillingEventType =
  | 'plan.upgraded'
  | 'plan.upgrade_requested'
  | 'plan.upgrade_approved'
  | 'plan.renewed'
  | 'plan.past_due'
  | 'plan.downgraded';

export async function recordBillingEvent(
  tx: Queryable,
  merchantId: string,
  type: BillingEventType,
  data: Record<string, string | number | null>,
): Promise<void> {
  await tx`insert into billing_events (merchant_id, id, type, data)
    values (${merchantId}, ${newId('bev')}, ${type}, ${tx.json(data)})`;
}
