import { api } from '@platform/shared/api';
import { keysetPage } from '@platform/shared/cursor';
import { defineOperation } from '@platform/shared/operation';
import type { CommissionsDeps } from '../deps.ts';
import { presentCommission } from '../present.ts';
import { listCommissions } from '../queries/commissions.ts';

export const listCommissionsOperation = (deps: CommissionsDeps) =>
  defineOperation(api.listCommissions, async (ctx, { query }) => ({
    outcome: 'ok',
    body: await keysetPage({
      key: deps.cursorKey,
      scope: {
        merchantId: ctx.merchantId,
        list: 'commissions',
        filters: { status: query.status ?? null, affiliate_id: query.affiliate_id ?? null },
      },
      cursor: query.cursor,
      limit: query.limit ?? 25,
      fetch: (after, limit) =>
        listCommissions(ctx.sql, ctx.merchantId, {
          status: query.status,
          affiliateId: query.affiliate_id,
          after,
          limit,
        }),
      present: presentCommission,
    }),
  }));
