import { api } from '@platform/shared/api';
import { keysetPage } from '@platform/shared/cursor';
import { notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import type { CommissionsDeps } from '../deps.ts';
import { presentCommission } from '../present.ts';
import { clawbacksOf, type ClawbackRow } from '../queries/clawbacks.ts';
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
    let clawbacks = new Map<string, ClawbackRow>();
    return {
      outcome: 'ok',
      body: await keysetPage({
        key: deps.cursorKey,
        scope: { merchantId: ctx.merchantId, list: 'payout_commissions', filters: { payout_id: payoutId } },
        cursor: query.cursor,
        limit: query.limit ?? 25,
        fetch: async (after, limit) => {
          const rows = await listPayoutCommissions(ctx.sql, ctx.merchantId, payoutId, { after, limit });
          // As the commissions list: only voided commissions can have a clawback, most pages ask for none.
          const voided = rows.filter((r) => r.status === 'voided').map((r) => r.id);
          if (voided.length > 0) clawbacks = await clawbacksOf(ctx.sql, ctx.merchantId, voided);
          return rows;
        },
        present: (row) => presentCommission(row, clawbacks.get(row.id)),
      }),
    };
  });
