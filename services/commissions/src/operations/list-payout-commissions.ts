import { api } from '@platform/shared/api';
import { keysetPage } from '@platform/shared/cursor';
import { notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import type { CommissionsDeps } from '../deps.ts';
import { presentCommission } from '../present.ts';
import { listPayoutCommissions, payoutExists } from '../queries/payout-commissions.ts';

/**
 * Every commission of a payout, a page at a time: the payout itself carries commission_count and only the first
 * commission_ids, so that no answer or webhook grows with the merchant's data.
 */
export const listPayoutCommissionsOperation = (deps: CommissionsDeps) =>
  defineOperation(api.listPayoutCommissions, async (ctx, { params, query }) => {
    const payoutId = params.payout_id;
    // A malformed id names no row: 404, like another merchant's id.
    if (!isId('po', payoutId) || !(await payoutExists(ctx.sql, ctx.merchantId, payoutId))) throw notFound('payout');
    return {
      outcome: 'ok',
      body: await keysetPage({
        key: deps.cursorKey,
        scope: { merchantId: ctx.merchantId, list: 'payout_commissions', filters: { payout_id: payoutId } },
        cursor: query.cursor,
        limit: query.limit ?? 25,
        fetch: (after, limit) => listPayoutCommissions(ctx.sql, ctx.merchantId, payoutId, { after, limit }),
        present: (row) => presentCommission(row),
      }),
    };
  });
