import type { Commission } from '@platform/shared/schemas/commissions';
import type { Payout } from '@platform/shared/schemas/payouts';
import type { ClawbackRow, ClawedBack } from './queries/clawbacks.ts';
import type { CommissionRow } from './queries/commissions.ts';
import type { PayoutRow } from './queries/payout-row.ts';

/** The only way a commission leaves the service in an API response: field by field (with its clawback, if any). */
export function presentCommission(row: CommissionRow, clawback?: ClawbackRow): Commission {
  return {
    id: row.id,
    amount: Number(row.amount),
    currency: row.currency,
    status: row.status,
    order_id: row.order_id,
    affiliate_id: row.affiliate_id,
    event_id: row.event_id,
    level: row.level,
    rate: row.rate === null ? null : Number(row.rate),
    created_at: row.created_at.toISOString(),
    approved_at: row.approved_at?.toISOString() ?? null,
    voided_at: row.voided_at?.toISOString() ?? null,
    void_reason: row.void_reason,
    void_requested_at: row.void_requested_at?.toISOString() ?? null,
    clawback: clawback
      ? {
          payout_id: clawback.payout_id,
          amount: Number(clawback.amount),
          recovered: Number(clawback.recovered),
          created_at: clawback.created_at.toISOString(),
        }
      : null,
  };
}

/** The data of commission.created, commission.approved and commission.voided. */
export function commissionEventData(row: CommissionRow) {
  return {
    commission_id: row.id,
    affiliate_id: row.affiliate_id,
    amount: Number(row.amount),
    currency: row.currency,
    status: row.status,
    order_id: row.order_id,
    event_id: row.event_id,
    level: row.level,
  };
}

/** The data of commission.voided for a commission that had been paid: the clawback it causes. */
export function clawbackEventData(row: ClawedBack) {
  return {
    ...commissionEventData(row),
    clawback: { payout_id: row.clawback_payout_id, amount: Number(row.amount), currency: row.currency },
  };
}

/** The only way a payout leaves the service in an API response: field by field. */
export function presentPayout(row: PayoutRow): Payout {
  return {
    id: row.id,
    affiliate_id: row.affiliate_id,
    amount: Number(row.amount),
    currency: row.currency,
    status: row.status,
    method: row.method,
    reference: row.reference,
    commission_ids: row.commission_ids,
    commission_count: row.commission_count,
    period_start: row.period_start.toISOString(),
    period_end: row.period_end.toISOString(),
    created_at: row.created_at.toISOString(),
    sent_at: row.sent_at?.toISOString() ?? null,
    paid_at: row.paid_at?.toISOString() ?? null,
    failed_at: row.failed_at?.toISOString() ?? null,
    failure_reason: row.failure_reason,
    held_reason: row.held_reason,
    exported_at: row.exported_at?.toISOString() ?? null,
    adjustments: row.adjustments.map((a) => ({
      type: 'clawback',
      commission_id: a.commission_id,
      amount: -Number(a.amount),
    })),
    adjustment_count: row.adjustment_count,
    adjustments_amount: -Number(row.adjustments_amount),
  };
}

/**
 * The data of payout.sent, payout.paid and payout.failed (failure_reason on failed only): commission_count and the
 * first commission_ids, never every id (an event must fit one NATS message; the list is paged by the API).
 */
export function payoutEventData(row: PayoutRow) {
  return {
    payout_id: row.id,
    affiliate_id: row.affiliate_id,
    amount: Number(row.amount),
    currency: row.currency,
    status: row.status,
    commission_ids: row.commission_ids,
    commission_count: row.commission_count,
    ...(row.status === 'failed' ? { failure_reason: row.failure_reason ?? '' } : {}),
  };
}
