import { api } from '@platform/shared/api';
import { defineOperation } from '@platform/shared/operation';
import { outboxCommitted } from '@platform/shared/outbox';
import type { CommissionsDeps } from '../deps.ts';
import { applyPayoutMove, checkMoveFields } from '../engine/payout-move.ts';
import { presentPayout } from '../present.ts';

/** PATCH /api/v1/payouts/{id}: one move of the payout (engine/payout-move.ts says which and what they do). */
export const updatePayoutOperation = (deps: CommissionsDeps) =>
  defineOperation(api.updatePayout, async (ctx, { params, body }) => {
    checkMoveFields(body);
    const { payout, changed } = await ctx.sql.begin((tx) =>
      applyPayoutMove(tx, ctx.merchantId, params.payout_id, body, deps.now()),
    );
    if (changed && payout.status !== 'canceled') outboxCommitted(ctx.sql);
    ctx.log.info('payout updated', { payout_id: payout.id, status: payout.status, changed });
    return { outcome: 'ok', body: presentPayout(payout) };
  });
