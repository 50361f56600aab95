import { api } from '@platform/shared/api';
import { invalidInput } from '@platform/shared/errors';
import { defineOperation } from '@platform/shared/operation';
import { readPayoutDetails, type PayoutDetails } from '@platform/shared/payee';
import type { CommissionsDeps } from '../deps.ts';
import { bankCsv, exportedIds, paypalCsv } from '../domain/payout-csv.ts';
import { recordExport } from '../queries/payout-exports.ts';
import { exportablePayouts } from '../queries/payouts.ts';

/**
 * The answer travels back as one NATS message (max_payload, 1 MiB by default): a file that would not fit is refused
 * with what to do instead, never cut short. 5,000 rows (the most an export holds) fit unless their e-mails are long.
 */
const EXPORT_MAX_BYTES = 960 * 1024;

/**
 * The payouts to send, as a CSV file for merchants who pay outside the platform. The payout details are decrypted
 * here for the file only: they are never logged, and the answer goes to the merchant who owns them (a key with the
 * write scope: reading them in clear is more than a read key may). In one transaction, the export is recorded (who,
 * when, which payouts) and the payouts with a row in the file are frozen: once the bank may hold the file, their
 * amounts and commissions no longer change (docs/PAYOUTS.md). A file refused for its size records nothing.
 */
export const exportPayoutsOperation = (deps: CommissionsDeps) =>
  defineOperation(api.exportPayouts, async (ctx, { query }) => {
    // Only pending payouts are exported, and frozen by it: a file of a sending or sent one (perhaps paid through the
    // platform) would let the bank pay it a second time.
    if (query.status !== undefined && query.status !== 'pending')
      throw invalidInput('status', 'only pending payouts are exported');
    const status = 'pending';
    const layout = query.layout ?? 'paypal';
    const { body, count } = await ctx.sql.begin(async (tx) => {
      const rows = await exportablePayouts(tx, ctx.merchantId, { currency: query.currency });
      const details = new Map<string, PayoutDetails | null>();
      for (const row of rows) {
        if (!details.has(row.affiliate_id))
          details.set(row.affiliate_id, await readPayoutDetails(tx, deps.vaultKeys, ctx.merchantId, row.affiliate_id));
      }
      const payouts = rows.map((r) => ({ ...r, details: details.get(r.affiliate_id) ?? null }));
      const file = layout === 'bank' ? bankCsv(payouts) : paypalCsv(payouts);
      if (Buffer.byteLength(file) > EXPORT_MAX_BYTES)
        throw invalidInput(
          'currency',
          'the file would be larger than one answer carries: export one currency at a time',
        );
      const payoutIds = exportedIds(payouts, layout);
      await recordExport(
        tx,
        ctx.merchantId,
        { keyId: ctx.keyId, layout, status, currency: query.currency ?? null, payoutIds },
        deps.now(),
      );
      return { body: file, count: payoutIds.length };
    });
    ctx.log.info('payouts exported', { layout, payouts: count });
    return { outcome: 'ok', body, contentType: 'text/csv' };
  });
