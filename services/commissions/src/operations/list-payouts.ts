import { api } from '@platform/shared/api';
import { keysetPage } from '@platform/shared/cursor';
import { defineOperation } from '@platform/shared/operation';
import type { CommissionsDeps } from '../deps.ts';
import { presentPayout } from '../present.ts';
import { listPayouts } from '../queries/payouts.ts';

export const listPayoutsOperation = (deps: CommissionsDeps) =>
  defineOperation(api.listPayouts, async (ctx, { query }) => ({
    outcome: 'ok',
    body: await keysetPage({
      key: deps.cursorKey,
      scope: {
        merchantId: ctx.merchantId,
        list: 'payouts',
        filters: { status: query.status ?? null, affiliate_id: query.affiliate_id ?? null },
      },
      cursor: query.cursor,
      limit: query.limit ?? 25,
      fetch: (after, limit) =>
        listPayouts(ctx.sql, ctx.merchantId, { status: query.status, affiliateId: query.affiliate_id, after, limit }),
      present: presentPayout,
    }),
  }));
