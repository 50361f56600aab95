import { api } from '@platform/shared/api';
import { ApiError, invalidInput, notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { enqueueEvents, outboxCommitted } from '@platform/shared/outbox';
import { hasValidTaxForm } from '@platform/shared/payee';
import { loadMerchantSettings } from '@platform/shared/schemas/merchant-settings';
import type { UpdatePayoutBody } from '@platform/shared/schemas/payouts';
import type { CommissionsDeps } from '../deps.ts';
import { moveRefusal } from '../engine/payouts.ts';
import { payoutEventData, presentPayout } from '../present.ts';
import {
  addPaidToAffiliate,
  findPayout,
  lockPayoutCommissions,
  movePayout,
  payPayoutCommissions,
  releasePayoutCommissions,
} from '../queries/payouts.ts';

/** The fields each move takes: method and reference with sent, failure_reason with failed (required). */
function checkFields(body: UpdatePayoutBody): void {
  for (const field of ['method', 'reference'] as const) {
    if (body[field] !== undefined && body.status !== 'sent')
      throw invalidInput(field, 'is only accepted with status sent');
  }
  if (body.failure_reason !== undefined && body.status !== 'failed')
    throw invalidInput('failure_reason', 'is only accepted with status failed');
  if (body.status === 'failed' && body.failure_reason === undefined)
    throw invalidInput('failure_reason', 'is required with status failed');
}

/**
 * Moves a payout: pending → sent (not while held for a tax form) or canceled, sent → paid or failed. paid marks its
 * commissions paid and adds the amount to the affiliate's totals; failed and canceled release its commissions, which
 * are approved and in no payout again. payout.sent, payout.paid and payout.failed are written to the outbox in the
 * same transaction. Asking for the status the payout already has changes nothing (a retried request is harmless).
 */
export const updatePayoutOperation = (deps: CommissionsDeps) =>
  defineOperation(api.updatePayout, async (ctx, { params, body }) => {
    checkFields(body);
    if (!isId('po', params.payout_id)) throw notFound('payout');
    const merchantId = ctx.merchantId;
    const { payout, changed } = await ctx.sql.begin(async (tx) => {
      if (!(await findPayout(tx, merchantId, params.payout_id))) throw notFound('payout');
      // Commissions first, then the payout: the lock order a void follows too.
      await lockPayoutCommissions(tx, merchantId, params.payout_id);
      const current = (await findPayout(tx, merchantId, params.payout_id, true))!;
      if (current.status === body.status) return { payout: current, changed: false };
      let held = current.held_reason;
      // A form stored since the payout was held releases it now, whatever path stored it.
      if (body.status === 'sent' && held && (await hasValidTaxForm(tx, merchantId, current.affiliate_id))) held = null;
      const refusal = moveRefusal(current.status, body.status, held);
      if (refusal) throw new ApiError('CONFLICT', refusal);

      const at = deps.now();
      switch (body.status) {
        case 'sent':
          await movePayout(
            tx,
            merchantId,
            current.id,
            { status: 'sent', method: 'manual', reference: body.reference ?? null },
            at,
          );
          break;
        case 'paid': {
          await movePayout(tx, merchantId, current.id, { status: 'paid' }, at);
          await payPayoutCommissions(tx, merchantId, current.id, at);
          const settings = await loadMerchantSettings(tx, merchantId);
          await addPaidToAffiliate(tx, current, settings!.currency, at);
          break;
        }
        case 'failed':
          await movePayout(tx, merchantId, current.id, { status: 'failed', failureReason: body.failure_reason! }, at);
          await releasePayoutCommissions(tx, merchantId, current.id, at);
          break;
        case 'canceled':
          await movePayout(tx, merchantId, current.id, { status: 'canceled' }, at);
          await releasePayoutCommissions(tx, merchantId, current.id, at);
          break;
      }
      const after = (await findPayout(tx, merchantId, current.id))!;
      // Canceling has no webhook: the twelve event types have none for it.
      if (after.status !== 'canceled')
        await enqueueEvents(tx, [
          { merchantId, type: `payout.${after.status as 'sent' | 'paid' | 'failed'}`, data: payoutEventData(after) },
        ]);
      return { payout: after, changed: true };
    });
    if (changed && payout.status !== 'canceled') outboxCommitted(ctx.sql);
    ctx.log.info('payout updated', { payout_id: payout.id, status: payout.status, changed });
    return { outcome: 'ok', body: presentPayout(payout) };
  });
