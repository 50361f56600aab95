import type { Queryable } from '@platform/shared/db';
import { ApiError, invalidInput, notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { enqueueEvents } from '@platform/shared/outbox';
import { hasValidTaxForm } from '@platform/shared/payee';
import { loadMerchantSettings } from '@platform/shared/schemas/merchant-settings';
import type { UpdatePayoutBody } from '@platform/shared/schemas/payouts';
import { clawbackEventData, commissionEventData, payoutEventData } from './present.ts';
import { clawBackRequestedInPayout, voidRequestedInPayout } from './queries/clawbacks.ts';
import {
  addPaidToAffiliate,
  findPayout,
  lockPayoutCommissions,
  movePayout,
  payPayoutCommissions,
  releasePayoutCommissions,
  type PayoutRow,
} from './queries/payouts.ts';
import { moveRefusal } from './domain/payouts.ts';

/** The fields each move takes: method and reference with sent, failure_reason with failed (required). */
export function checkMoveFields(body: UpdatePayoutBody): void {
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
 * Moves a payout in the caller's transaction: pending → sent (not while held for a tax form) or canceled, sent →
 * paid or failed; `byLedger` (the payment service's answers, platform-ledger.ts): pending or sending → sent,
 * then paid or failed. paid marks its commissions paid and adds the amount to the affiliate's totals; failed and
 * canceled release its commissions, which are approved and in no payout again. payout.sent, payout.paid and
 * payout.failed go to the outbox in the same transaction (the caller calls outboxCommitted once it committed, when
 * `changed`). Asking for the status the payout already has changes nothing (a retried request is harmless). The API
 * and the operator CLI both move payouts through here.
 */
export async function applyPayoutMove(
  tx: Queryable,
  merchantId: string,
  payoutId: string,
  body: UpdatePayoutBody,
  at: Date,
  opts: { byLedger?: boolean } = {},
): Promise<{ payout: PayoutRow; changed: boolean }> {
  checkMoveFields(body);
  if (!isId('po', payoutId) || !(await findPayout(tx, merchantId, payoutId))) throw notFound('payout');
  // Commissions first, then the payout: the lock order a void follows too.
  await lockPayoutCommissions(tx, merchantId, payoutId);
  const current = (await findPayout(tx, merchantId, payoutId, true))!;
  if (current.status === body.status) return { payout: current, changed: false };
  // Its payment through the platform is under way: only the payment service's answer moves it.
  if (current.status === 'sending' && !opts.byLedger)
    throw new ApiError(
      'CONFLICT',
      `A sending payout cannot move to ${body.status}: its payment through the platform is under way; allowed moves from sending: sent (with method platform, which asks the payment service again)`,
    );
  // A payout sent through the platform is paid or failed by its ledger payout, not by hand.
  if (current.method === 'platform' && (body.status === 'paid' || body.status === 'failed') && !opts.byLedger)
    throw new ApiError(
      'CONFLICT',
      `A payout sent through the platform becomes ${body.status} when its ledger payout does`,
    );
  // The ledger paid it: a hold cannot undo that. A form stored since the payout was held releases it now, whatever
  // path stored it.
  let held = opts.byLedger ? null : current.held_reason;
  if (body.status === 'sent' && held && (await hasValidTaxForm(tx, merchantId, current.affiliate_id))) held = null;
  const refusal = moveRefusal(current.status, body.status, held);
  if (refusal) throw new ApiError('CONFLICT', refusal);

  const voids: VoidEvent[] = [];
  switch (body.status) {
    case 'sent':
      await movePayout(
        tx,
        merchantId,
        payoutId,
        { status: 'sent', method: body.method ?? 'manual', reference: body.reference ?? null },
        at,
      );
      break;
    case 'paid': {
      await movePayout(tx, merchantId, payoutId, { status: 'paid' }, at);
      await payPayoutCommissions(tx, merchantId, payoutId, at);
      const settings = await loadMerchantSettings(tx, merchantId);
      await addPaidToAffiliate(tx, current, settings!.currency, at);
      // Refunds and voids recorded while it was frozen: the money went out, so it is taken back from later payouts.
      const clawed = await clawBackRequestedInPayout(tx, merchantId, payoutId, at);
      for (const row of clawed) voids.push({ merchantId, type: 'commission.voided', data: clawbackEventData(row) });
      break;
    }
    case 'failed':
      await movePayout(tx, merchantId, payoutId, { status: 'failed', failureReason: body.failure_reason! }, at);
      await voidRequested(tx, merchantId, payoutId, at, voids);
      await releasePayoutCommissions(tx, merchantId, payoutId, at);
      break;
    case 'canceled':
      await movePayout(tx, merchantId, payoutId, { status: 'canceled' }, at);
      await voidRequested(tx, merchantId, payoutId, at, voids);
      await releasePayoutCommissions(tx, merchantId, payoutId, at);
      break;
  }
  const after = (await findPayout(tx, merchantId, payoutId))!;
  // Canceling has no webhook: the twelve event types have none for it.
  if (after.status !== 'canceled')
    await enqueueEvents(tx, [
      { merchantId, type: `payout.${after.status as 'sent' | 'paid' | 'failed'}`, data: payoutEventData(after) },
    ]);
  await enqueueEvents(tx, voids);
  return { payout: after, changed: true };
}

type VoidEvent = { merchantId: string; type: 'commission.voided'; data: Record<string, unknown> };

/**
 * Refunds and voids recorded while the payout was frozen are voided when it fails or is canceled, not released to be
 * paid in the next run; call before releasing its commissions.
 */
async function voidRequested(tx: Queryable, merchantId: string, payoutId: string, at: Date, events: VoidEvent[]) {
  const voided = await voidRequestedInPayout(tx, merchantId, payoutId, at);
  for (const row of voided) events.push({ merchantId, type: 'commission.voided', data: commissionEventData(row) });
}
