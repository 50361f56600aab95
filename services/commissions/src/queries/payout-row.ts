import type { HeldReason, PayoutStatus } from '@platform/shared/schemas/payouts';

/** A payout as queries/payouts.ts reads it. */
export interface PayoutRow {
  id: string;
  merchant_id: string;
  affiliate_id: string;
  amount: string;
  currency: string;
  status: PayoutStatus;
  method: 'manual' | 'platform' | null;
  reference: string | null;
  /** The first PAYOUT_COMMISSION_IDS_MAX, by id: a payout may hold tens of thousands. */
  commission_ids: string[];
  commission_count: number;
  period_start: Date;
  period_end: Date;
  created_at: Date;
  sent_at: Date | null;
  paid_at: Date | null;
  failed_at: Date | null;
  failure_reason: string | null;
  held_reason: HeldReason | null;
  exported_at: Date | null;
  /** The first PAYOUT_ADJUSTMENTS_MAX clawbacks it deducts, oldest first. */
  adjustments: { commission_id: string; amount: string }[];
  adjustment_count: number;
  /** The sum of all of them, positive (what is deducted). */
  adjustments_amount: string;
}
