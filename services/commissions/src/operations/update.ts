import { api } from '@platform/shared/api';
import { invalidInput, notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { enqueueEvents, outboxCommitted } from '@platform/shared/outbox';
import type { CommissionStatus } from '@platform/shared/schemas/commissions';
import type { CommissionsDeps } from '../deps.ts';
import { commissionEventData, presentCommission } from '../present.ts';
import { approveCommission, findCommission, voidCommissions } from '../queries/commissions.ts';

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
      const after =
        body.status === 'approved'
          ? await approveCommission(tx, ctx.merchantId, current.id, at)
          : (await voidCommissions(tx, ctx.merchantId, [current.id], body.void_reason ?? 'manual', at))[0]!;
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
