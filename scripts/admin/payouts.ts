import type { Sql } from '@platform/shared/db';
import { ApiError } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { outboxCommitted } from '@platform/shared/outbox';
import { PAYOUT_STATUSES, type PayoutStatus, type UpdatePayoutBody } from '@platform/shared/schemas/payouts';
import { applyPayoutMove } from '@platform/commissions/payout-move';
import { createPayouts } from '@platform/commissions/payout-run';
import { presentPayout } from '@platform/commissions/present';
import { listPayouts } from '@platform/commissions/queries/payouts';
import { UsageError } from './commands.ts';

/**
 * Operator commands for payouts: the same engine, queries and output shape as the commissions service's API, and the
 * same webhooks (written to the outbox in the move's transaction; the services' relays publish them).
 */

export const PAYOUT_USAGE = `  payout create <merchant_id> [--affiliate <affiliate_id>]        group approved commissions into payouts
  payout list <merchant_id> [--status S] [--affiliate <affiliate_id>]   the newest 100
  payout mark <merchant_id> <payout_id> <sent|paid|failed|canceled> [--reference R] [--reason R]`;

export async function createPayoutsCommand(sql: Sql, merchantId: string, affiliateId?: string) {
  await assertMerchant(sql, merchantId);
  if (affiliateId !== undefined) await assertAffiliate(sql, merchantId, affiliateId);
  const rows = await sql.begin((tx) =>
    createPayouts(tx, merchantId, new Date(), affiliateId === undefined ? undefined : [affiliateId]),
  );
  return rows.map(presentPayout);
}

export async function listPayoutsCommand(sql: Sql, merchantId: string, status?: string, affiliateId?: string) {
  await assertMerchant(sql, merchantId);
  if (status !== undefined && !(PAYOUT_STATUSES as readonly string[]).includes(status))
    throw new UsageError(`--status must be one of ${PAYOUT_STATUSES.join(', ')}`);
  if (affiliateId !== undefined) await assertAffiliate(sql, merchantId, affiliateId);
  const rows = await listPayouts(sql, merchantId, {
    status: status as PayoutStatus | undefined,
    affiliateId,
    limit: 100,
  });
  return rows.map(presentPayout);
}

const MOVES = ['sent', 'paid', 'failed', 'canceled'] as const;

export async function markPayoutCommand(
  sql: Sql,
  merchantId: string,
  payoutId: string,
  status: string,
  opts: { reference?: string; reason?: string },
) {
  await assertMerchant(sql, merchantId);
  if (!(MOVES as readonly string[]).includes(status))
    throw new UsageError(`the status must be one of ${MOVES.join(', ')}`);
  const body: UpdatePayoutBody = {
    status: status as UpdatePayoutBody['status'],
    ...(opts.reference !== undefined ? { reference: opts.reference } : {}),
    ...(opts.reason !== undefined ? { failure_reason: opts.reason } : {}),
  };
  try {
    const { payout, changed } = await sql.begin((tx) => applyPayoutMove(tx, merchantId, payoutId, body, new Date()));
    if (changed) outboxCommitted(sql);
    return presentPayout(payout);
  } catch (err) {
    // The API's refusals in the CLI's words: which payout, which field.
    if (err instanceof ApiError) {
      const detail = err.details?.[0];
      const option =
        detail?.path === 'failure_reason' ? '--reason' : detail?.path === 'reference' ? '--reference' : detail?.path;
      throw new UsageError(
        err.code === 'NOT_FOUND'
          ? `no payout ${payoutId} at merchant ${merchantId}`
          : detail
            ? `${option} ${detail.message}`
            : err.message,
        { cause: err },
      );
    }
    throw err;
  }
}

async function assertMerchant(sql: Sql, merchantId: string): Promise<void> {
  const [row] = isId('mer', merchantId) ? await sql`select 1 from merchants where id = ${merchantId}` : [];
  if (!row) throw new UsageError(`no merchant ${merchantId}`);
}

async function assertAffiliate(sql: Sql, merchantId: string, affiliateId: string): Promise<void> {
  const [row] = isId('aff', affiliateId)
    ? await sql`select 1 from affiliates where merchant_id = ${merchantId} and id = ${affiliateId}`
    : [];
  if (!row) throw new UsageError(`no affiliate ${affiliateId} at merchant ${merchantId}`);
}
