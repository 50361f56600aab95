import { api } from '@platform/shared/api';
import { invalidInput, moveRefused, notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { enqueueEvents, outboxCommitted } from '@platform/shared/outbox';
import type { CommissionStatus } from '@platform/shared/schemas/commissions';
import type { CommissionsDeps } from '../deps.ts';
import { commissionEventData, presentCommission } from '../present.ts';
import { clawbacksOf, requestVoids } from '../queries/clawbacks.ts';
import { approveCommission, findCommission, voidCommissions, type CommissionRow } from '../queries/commissions.ts';
import { openPayoutOf, removeVoidedFromPendingPayouts } from '../queries/payouts.ts';

/** The moves a merchant may make by hand; approved → paid belongs to payouts. */
const MOVES: Record<CommissionStatus, CommissionStatus[]> = {
  pending: ['approved', 'voided'],
  approved: ['voided'],
  paid: [],
  voided: [],
};

export const updateCommissionOperation = (deps: CommissionsDeps) =>
  defineOperation(api.updateCommission, async (ctx, { params, body }) => {
    if (body.void_reason !== undefined && body.status !== 'voided') {
      throw invalidInput('void_reason', 'is only accepted with status voided');
    }
    if (!isId('com', params.commission_id)) throw notFound('commission');
    const { commission, changed } = await ctx.sql.begin(async (tx) => {
      const current = await findCommission(tx, ctx.merchantId, params.commission_id, true);
      if (!current) throw notFound('commission');
      // Asking for the status it already has changes nothing (a retried request is harmless); so does a void already
      // recorded while its payout is frozen.
      if (current.status === body.status) return { commission: current, changed: false };
      if (body.status === 'voided' && current.void_requested_at) return { commission: current, changed: false };
      if (!MOVES[current.status].includes(body.status)) {
        throw moveRefused('commission', current.status, body.status, MOVES[current.status]);
      }
      const at = deps.now();
      let after: CommissionRow;
      const reason = body.void_reason ?? 'manual';
      if (body.status === 'approved') after = await approveCommission(tx, ctx.merchantId, current.id, at);
      else {
        const payout = await openPayoutOf(tx, ctx.merchantId, current.id);
        if (payout?.frozen) {
          // Money is on its way, or the bank holds the file: the void is recorded, and commission.voided follows
          // when the payout fails or is canceled, or with a clawback when it is paid.
          after = (await requestVoids(tx, ctx.merchantId, [current.id], reason, at))[0]!;
          return { commission: after, changed: true };
        }
        after = (await voidCommissions(tx, ctx.merchantId, [current.id], reason, at))[0]!;
        // Voided inside a pending payout: released from it (the link stays as history), its amount recomputed.
        await removeVoidedFromPendingPayouts(tx, ctx.merchantId, [after.id], at);
      }
      await enqueueEvents(tx, [
        {
          merchantId: ctx.merchantId,
          type: body.status === 'approved' ? 'commission.approved' : 'commission.voided',
          data: commissionEventData(after),
        },
      ]);
      return { commission: after, changed: true };
    });
    if (changed) outboxCommitted(ctx.sql);
    ctx.log.info('commission updated', {
      commission_id: commission.id,
      status: commission.status,
      changed,
      void_requested: commission.void_requested_at !== null,
    });
    const clawback = (await clawbacksOf(ctx.sql, ctx.merchantId, [commission.id])).get(commission.id);
    return { outcome: 'ok', body: presentCommission(commission, clawback) };
  });
