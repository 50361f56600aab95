import { api } from '@platform/shared/api';
import { defineOperation } from '@platform/shared/operation';
import { readPayoutDetails, type PayoutDetails } from '@platform/shared/payee';
import type { CommissionsDeps } from '../deps.ts';
import { bankCsv, paypalCsv } from '../engine/payout-csv.ts';
import { exportablePayouts } from '../queries/payouts.ts';

/**
 * The payouts to send, as a CSV file for merchants who pay outside the platform. The payout details are decrypted
 * here for the file only: they are never logged, and the answer goes to the merchant who owns them.
 */
export const exportPayoutsOperation = (deps: CommissionsDeps) =>
  defineOperation(api.exportPayouts, async (ctx, { query }) => {
    const rows = await exportablePayouts(ctx.sql, ctx.merchantId, {
      status: query.status ?? 'pending',
      currency: query.currency,
    });
    const details = new Map<string, PayoutDetails | null>();
    for (const row of rows) {
      if (!details.has(row.affiliate_id))
        details.set(
          row.affiliate_id,
          await readPayoutDetails(ctx.sql, deps.vaultKeys, ctx.merchantId, row.affiliate_id),
        );
    }
    const payouts = rows.map((r) => ({ ...r, details: details.get(r.affiliate_id) ?? null }));
    const layout = query.layout ?? 'paypal';
    const body = layout === 'bank' ? bankCsv(payouts) : paypalCsv(payouts);
    ctx.log.info('payouts exported', { layout, payouts: rows.length });
    return { outcome: 'ok', body, contentType: 'text/csv' };
  });
