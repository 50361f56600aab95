import { Type } from '@sinclair/typebox';
import { Cursor, Limit, ListOf, Timestamp } from './common.ts';

/** One call of GET /api/v1/payouts/export, as the merchant's record of who read its affiliates' bank details. */
const PayoutExport = Type.Object(
  {
    id: Type.String({ description: 'identifier', examples: ['42'] }),
    api_key_id: Type.Union([Type.String(), Type.Null()], {
      description: 'the API key that asked; null when a dashboard user did',
      examples: ['key_01jd3t6m0s2e4w5x6y7z8a9b0c'],
    }),
    dashboard_user_id: Type.Union([Type.String(), Type.Null()], {
      description: 'the dashboard user who asked; null when an API key did',
      examples: [null],
    }),
    layout: Type.Union([Type.Literal('paypal'), Type.Literal('bank')], { description: 'the file layout asked for' }),
    status: Type.String({ description: 'the payout status asked for', examples: ['pending'] }),
    currency: Type.Union([Type.String(), Type.Null()], { description: 'the currency asked for, if any' }),
    payout_ids: Type.Array(Type.String(), {
      description: 'the payouts that had a row in the file (now frozen, if they were pending)',
      examples: [['po_01jd3t6m0s2e4w5x6y7z8a9b0c']],
    }),
    created_at: Timestamp('when the file was made'),
  },
  { additionalProperties: false, $id: 'PayoutExport' },
);

export const PayoutExportList = ListOf(PayoutExport, 'PayoutExportList');

export const ListPayoutExportsQuery = Type.Object(
  { cursor: Type.Optional(Cursor), limit: Type.Optional(Limit) },
  { additionalProperties: false },
);
