import { changePlanIn } from '@platform/shared/api-keys';
import { recordBillingEvent } from '@platform/shared/billing-events';
import type { Sql } from '@platform/shared/db';
import { ApiError } from '@platform/shared/errors';
import { isUpgrade, type Plan } from '@platform/shared/plans';

export const PLAN_USAGE = `  plan approve <merchant_id>                  apply the upgrade the merchant asked for (live payments without a processor)`;

/**
 * Where live payments have no processor, an upgrade from Settings › Plan is a request (docs/BILLING.md): the operator
 * settles it outside the platform and approves it here, which applies the plan at once. Answers the request approved.
 */
export async function approvePlan(sql: Sql, merchantId: string): Promise<Record<string, unknown>> {
  return sql.begin(async (tx) => {
    // The merchant first, as every transaction that changes a plan locks it (billing-charge.ts): no deadlock with an
    // upgrade asked meanwhile.
    const [merchant] = await tx<{ plan: Plan }[]>`select plan from merchants where id = ${merchantId} for update`;
    const [request] = await tx<{ id: string; from_plan: Plan; to_plan: Plan }[]>`
      select id, from_plan, to_plan from billing_charges
      where merchant_id = ${merchantId} and status = 'requested' for update`;
    if (!request || !merchant) throw new ApiError('NOT_FOUND', `No upgrade request of ${merchantId} is waiting`);
    // Asked of the plan the merchant was on then: a plan set since (the operator's set-plan) may make it no upgrade.
    if (!isUpgrade(merchant.plan, request.to_plan))
      throw new ApiError(
        'CONFLICT',
        `${merchantId} is on ${merchant.plan} now: the ${request.to_plan} it asked for is no longer an upgrade`,
      );
    await tx`update billing_charges set status = 'approved', settled_at = now()
      where merchant_id = ${merchantId} and id = ${request.id}`;
    await changePlanIn(tx, merchantId, request.to_plan, 'operator');
    await recordBillingEvent(tx, merchantId, 'plan.upgrade_approved', {
      charge_id: request.id,
      from_plan: request.from_plan,
      to_plan: request.to_plan,
    });
    return { merchant_id: merchantId, request: request.id, from: request.from_plan, plan: request.to_plan };
  });
}
