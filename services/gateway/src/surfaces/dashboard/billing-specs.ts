import { spec } from './define.ts';
import {
  BillingView,
  CardBody,
  CardResult,
  DowngradeBody,
  DowngradeResult,
  UpgradeBody,
  UpgradeResult,
} from './billing-schemas.ts';

/** Settings › Plan (routes-billing.ts), spread into dashboardSpecs (specs.ts). */
export const billingSpecs = {
  getBilling: spec({
    operationId: 'getBilling',
    permission: 'billing',
    method: 'get',
    path: '/dashboard/api/billing',
    summary: 'The plans with their prices and limits, the current plan, the saved card and the receipts',
    success: { status: 200, schema: BillingView, description: 'the plan and billing' },
  }),
  upgradePlan: spec({
    operationId: 'upgradePlan',
    permission: 'billing',
    method: 'post',
    path: '/dashboard/api/billing/upgrade',
    summary:
      'Upgrade: charge the prorated difference to the card (the new plan applies at once), or, where live payments have no processor, ask the operator',
    body: UpgradeBody,
    success: { status: 200, schema: UpgradeResult, description: 'paid, or requested' },
  }),
  downgradePlan: spec({
    operationId: 'downgradePlan',
    permission: 'billing',
    method: 'post',
    path: '/dashboard/api/billing/downgrade',
    summary:
      'Downgrade when the paid month ends (at once when none is running); the current plan cancels a downgrade scheduled',
    body: DowngradeBody,
    success: { status: 200, schema: DowngradeResult, description: 'scheduled, applied or cancelled' },
  }),
  updateCard: spec({
    operationId: 'updateCard',
    permission: 'billing',
    method: 'post',
    path: '/dashboard/api/billing/card',
    summary:
      'Save the card renewals are charged to; past due, the unpaid month is tried on it at once (once a day this way)',
    body: CardBody,
    success: { status: 200, schema: CardResult, description: 'the card saved, and the account’s state' },
  }),
};
