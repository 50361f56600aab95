import type { ApiOperation } from './api/define.ts';
import { affiliatesApi } from './api/affiliates.ts';
import { analyticsApi } from './api/analytics.ts';
import { commissionsApi } from './api/commissions.ts';
import { couponsApi } from './api/coupons.ts';
import { eventsApi } from './api/events.ts';
import { taxFormsApi } from './api/tax-forms.ts';
import { payoutsApi } from './api/payouts.ts';
import { webhooksApi } from './api/webhooks.ts';

export type { ApiOperation, OperationInput } from './api/define.ts';

/** Every REST operation of /api/v1, by domain; each domain's file holds its entries. */
export const api = {
  ...affiliatesApi,
  ...commissionsApi,
  ...eventsApi,
  ...couponsApi,
  ...webhooksApi,
  ...taxFormsApi,
  ...payoutsApi,
  ...analyticsApi,
} as const;

export const operations: ApiOperation[] = Object.values(api);
