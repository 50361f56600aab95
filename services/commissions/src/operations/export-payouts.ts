import { api } from '@platform/shared/api';
import { invalidInput } from '@platform/shared/errors';
import { defineOperation } from '@platform/shared/operation';
import { readPayoutDetails, type PayoutDetails } from '@platform/shared/payee';
import type { CommissionsDeps } from '../deps.ts';
import { bankCsv, paypalCsv } from '../engine/payout-csv.ts';
import { exportablePayouts } from '../queries/payouts.ts';

/**
 * The answer travels back as one NATS message (max_payload, 1 MiB by default): a file that would not fit is refused
 * with what to do instead, never cut short. 5,000 rows (the most an export holds) fit unless their e-mails are long.
 */
const EXPORT_MAX_BYTES = 960 * 1024;

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
    if (Buffer.byteLength(body) > EXPORT_MAX_BYTES)
      throw invalidInput('currency', 'the file would be larger than one answer carries: export one currency at a time');
    ctx.log.info('payouts exported', { layout, payouts: rows.length });
    return { outcome: 'ok', body, contentType: 'text/csv' };
  });
