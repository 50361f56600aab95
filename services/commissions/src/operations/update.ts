import { api } from '@platform/shared/api';
import { ApiError, invalidInput, notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { enqueueEvents, outboxCommitted } from '@platform/shared/outbox';
import type { CommissionStatus } from '@platform/shared/schemas/commissions';
import type { CommissionsDeps } from '../deps.ts';
import { commissionEventData, presentCommission } from '../present.ts';
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
      // Asking for the status it already has changes nothing (a retried request is harmless).
      if (current.status === body.status) return { commission: current, changed: false };
      if (!MOVES[current.status].includes(body.status)) {
        throw invalidInput('status', `cannot move from ${current.status} to ${body.status}`);
      }
      const at = deps.now();
      let after: CommissionRow;
      if (body.status === 'approved') after = await approveCommission(tx, ctx.merchantId, current.id, at);
      else {
        // A payout that was sent carries the commission: it stays until the payout is paid or fails.
        const payout = await openPayoutOf(tx, ctx.merchantId, current.id);
        if (payout?.status === 'sent')
          throw new ApiError(
            'CONFLICT',
            `The commission is in payout ${payout.id}, which was sent; it can be voided if that payout fails`,
          );
        after = (await voidCommissions(tx, ctx.merchantId, [current.id], body.void_reason ?? 'manual', at))[0]!;
        // Voided inside a pending payout: taken out of it, and the payout's amount recomputed.
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
    ctx.log.info('commission updated', { commission_id: commission.id, status: commission.status, changed });
    return { outcome: 'ok', body: presentCommission(commission) };
  });
