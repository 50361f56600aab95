import { api } from '@platform/shared/api';
import { defineOperation } from '@platform/shared/operation';
import { outboxCommitted } from '@platform/shared/outbox';
import type { CommissionsDeps } from '../deps.ts';
import { ApiError, invalidInput } from '@platform/shared/errors';
import { applyPayoutMove, checkMoveFields } from '../payout-move.ts';
import { sendThroughPlatform } from '../platform-payouts.ts';
import { presentPayout } from '../present.ts';

/** PATCH /api/v1/payouts/{id}: one move of the payout (payout-move.ts says which and what they do). */
export const updatePayoutOperation = (deps: CommissionsDeps) =>
  defineOperation(api.updatePayout, async (ctx, { params, body }) => {
    checkMoveFields(body);
    const { payout, changed } = await (body.method === 'platform'
      ? sendOnPlatform()
      : ctx.sql.begin((tx) => applyPayoutMove(tx, ctx.merchantId, params.payout_id, body, deps.now())));
    // A platform send has called outboxCommitted itself, after the commit of its last step.
    if (changed && payout.status !== 'canceled' && body.method !== 'platform') outboxCommitted(ctx.sql);

    // Method platform: claimed `sending`, then the ledger pays it (platform-payouts.ts); its reference is the
    // ledger payout.
    function sendOnPlatform() {
      if (body.reference !== undefined)
        throw invalidInput('reference', 'is set by the platform (the ledger payout) with method platform');
      if (!deps.nats) throw new ApiError('UNAVAILABLE', 'The service is starting; try again');
      const sender = { sql: ctx.sql, nc: deps.nats.nc, prefix: deps.nats.prefix, deps, log: ctx.log };
      return sendThroughPlatform(sender, ctx.merchantId, params.payout_id, ctx.requestId);
    }
    ctx.log.info('payout updated', { payout_id: payout.id, status: payout.status, changed });
    return { outcome: 'ok', body: presentPayout(payout) };
  });
