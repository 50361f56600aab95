import { operation } from './define.ts';
import {
  CreatedPayouts,
  CreatePayoutsBody,
  ExportPayoutsQuery,
  ListPayoutsQuery,
  Payout,
  PayoutIdParams,
  PayoutList,
  PayoutsCsv,
  UpdatePayoutBody,
} from '../schemas/payouts.ts';
import { ListPayoutExportsQuery, PayoutExportList } from '../schemas/payout-exports.ts';

/** Payouts live in the commissions service, which owns the commissions they group. */
export const payoutsApi = {
  createPayouts: operation({
    service: 'commissions',
    name: 'createPayouts',
    operationId: 'createPayouts',
    method: 'post',
    path: '/api/v1/payouts',
    scope: 'write',
    tag: 'Payouts',
    summary:
      "Group approved, unpaid commissions into payouts: one per affiliate and currency whose total reaches the merchant's min_payout",
    body: CreatePayoutsBody,
    success: [{ status: 201, schema: CreatedPayouts, description: 'the payouts created' }],
  }),
  listPayouts: operation({
    service: 'commissions',
    name: 'listPayouts',
    operationId: 'listPayouts',
    method: 'get',
    path: '/api/v1/payouts',
    scope: 'read',
    tag: 'Payouts',
    summary: 'List payouts, newest first, optionally by status and affiliate',
    query: ListPayoutsQuery,
    success: [{ status: 200, schema: PayoutList, description: 'a page of payouts' }],
  }),
  // Declared before getPayout: routes match in this order, and `export` is not a payout id.
  exportPayouts: operation({
    service: 'commissions',
    name: 'exportPayouts',
    operationId: 'exportPayouts',
    method: 'get',
    path: '/api/v1/payouts/export',
    // It reads payout details in clear (IBANs, account numbers, PayPal e-mails): more than a read key may see.
    scope: 'write',
    tag: 'Payouts',
    summary:
      'The payouts to send as a CSV file: a PayPal Payouts batch, or bank transfers. Recorded (listPayoutExports); the pending payouts in the file are frozen',
    query: ExportPayoutsQuery,
    success: [{ status: 200, schema: PayoutsCsv, contentType: 'text/csv', description: 'the CSV file' }],
  }),
  listPayoutExports: operation({
    service: 'commissions',
    name: 'listPayoutExports',
    operationId: 'listPayoutExports',
    method: 'get',
    path: '/api/v1/payout_exports',
    scope: 'read',
    tag: 'Payouts',
    summary: 'List the CSV exports of payouts, newest first: who made each, when, and which payouts it held',
    query: ListPayoutExportsQuery,
    success: [{ status: 200, schema: PayoutExportList, description: 'a page of exports' }],
  }),
  getPayout: operation({
    service: 'commissions',
    name: 'getPayout',
    operationId: 'getPayout',
    method: 'get',
    path: '/api/v1/payouts/{payout_id}',
    scope: 'read',
    tag: 'Payouts',
    summary: 'Fetch one payout',
    params: PayoutIdParams,
    success: [{ status: 200, schema: Payout, description: 'the payout' }],
  }),
  updatePayout: operation({
    service: 'commissions',
    name: 'updatePayout',
    operationId: 'updatePayout',
    method: 'patch',
    path: '/api/v1/payouts/{payout_id}',
    scope: 'write',
    tag: 'Payouts',
    summary: 'Mark a payout sent, paid or failed, or cancel it',
    params: PayoutIdParams,
    body: UpdatePayoutBody,
    success: [{ status: 200, schema: Payout, description: 'the payout after the move' }],
  }),
} as const;
