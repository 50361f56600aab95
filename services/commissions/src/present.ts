import type { Commission } from '@platform/shared/schemas/commissions';
import type { CommissionRow } from './queries/commissions.ts';

/** The only way a commission leaves the service in an API response: field by field. */
export function presentCommission(row: CommissionRow): Commission {
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
