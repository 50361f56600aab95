import { api } from '@platform/shared/api';
import { keysetPage } from '@platform/shared/cursor';
import { defineOperation } from '@platform/shared/operation';
import type { CommissionsDeps } from '../deps.ts';
import { listExports, type PayoutExportRow } from '../queries/payout-exports.ts';

const present = (row: PayoutExportRow) => ({
  id: row.id,
  api_key_id: row.api_key_id,
  dashboard_user_id: row.dashboard_user_id,
  layout: row.layout,
  status: row.status,
  currency: row.currency,
  payout_ids: row.payout_ids,
  created_at: row.created_at.toISOString(),
});

export const listPayoutExportsOperation = (deps: CommissionsDeps) =>
  defineOperation(api.listPayoutExports, async (ctx, { query }) => ({
    outcome: 'ok',
    body: await keysetPage({
      key: deps.cursorKey,
      scope: { merchantId: ctx.merchantId, list: 'payout_exports', filters: {} },
      cursor: query.cursor,
      limit: query.limit ?? 25,
      fetch: (after, limit) => listExports(ctx.sql, ctx.merchantId, { after, limit }),
      present,
    }),
  }));
