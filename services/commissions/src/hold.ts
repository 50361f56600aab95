import type { Sql } from '@platform/shared/db';
import { enqueueEvents, outboxCommitted } from '@platform/shared/outbox';
import { loadMerchantSettings } from '@platform/shared/schemas/merchant-settings';
import type { Clock } from './deps.ts';
import { commissionEventData } from './present.ts';
import { approveDueCommissions, merchantsWithDueCandidates } from './queries/commissions.ts';

const DAY_MS = 86_400_000;
const BATCH = 200;

/**
 * One pass of the hold period: approves every pending commission that is not held for fraud and whose
 * created_at + the merchant's hold_days (24-hour days) is at or before now, each batch in a transaction with its
 * commission.approved events. Replicas running passes at once skip each other's rows (FOR UPDATE SKIP LOCKED).
 * Returns how many commissions this pass approved.
 */
export async function approveEndedHolds(sql: Sql, now: Clock): Promise<number> {
  const at = now();
  let approved = 0;
  for (const merchantId of await merchantsWithDueCandidates(sql, at)) {
    const settings = await loadMerchantSettings(sql, merchantId);
    if (!settings) continue;
    const cutoff = new Date(at.getTime() - settings.hold_days * DAY_MS);
    for (;;) {
      const count = await sql.begin(async (tx) => {
        const rows = await approveDueCommissions(tx, merchantId, cutoff, at, BATCH);
        await enqueueEvents(
          tx,
          rows.map((row) => ({ merchantId, type: 'commission.approved' as const, data: commissionEventData(row) })),
        );
        return rows.length;
      });
      if (count > 0) outboxCommitted(sql);
      approved += count;
      if (count < BATCH) break;
    }
  }
  return approved;
}
