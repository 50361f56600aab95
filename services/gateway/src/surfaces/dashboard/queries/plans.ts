import type { Queryable } from '@platform/shared/db';
import type { Plan } from '@platform/shared/plans';

/** The merchant's plan, if the merchant exists. */
export async function merchantPlan(sql: Queryable, merchantId: string): Promise<Plan | undefined> {
  const [row] = await sql<{ plan: Plan }[]>`select plan from merchants where id = ${merchantId}`;
  return row?.plan;
}

/**
 * The merchant's plan, its row locked until the transaction ends: every plan change (an upgrade, a downgrade, a
 * renewal, the fall back of an unpaid month) takes this lock first, so they run one at a time and in one order.
 */
export async function lockMerchantPlan(tx: Queryable, merchantId: string): Promise<Plan | undefined> {
  const [row] = await tx<{ plan: Plan }[]>`select plan from merchants where id = ${merchantId} for update`;
  return row?.plan;
}

/** The same lock when the plan itself is not needed. */
export const lockMerchant = (tx: Queryable, merchantId: string) =>
  tx`select 1 from merchants where id = ${merchantId} for update`;
