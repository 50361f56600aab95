import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { headers } from '@nats-io/nats-core';
import { PLATFORM_PAYOUT_SUBJECTS, RPC_OUTCOME_HEADER } from '@platform/shared/catalogue';
import type { Sql } from '@platform/shared/db';
import { ApiError, notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import type { Logger } from '@platform/shared/log';
import { decodeJson, encodeJson } from '@platform/shared/nats';
import { outboxCommitted } from '@platform/shared/outbox';
import { hasValidTaxForm, readPayoutDetails, type PayoutDetails } from '@platform/shared/payee';
import type { PaymentsRpcError } from '@platform/shared/payments/errors';
import type { AffiliatePayoutReply, AffiliatePayoutRequest, PayoutSettledRequest } from '@platform/shared/payments/rpc';
import type { Worker } from '@platform/shared/service';
import type { CommissionsDeps } from '../deps.ts';
import { findPayout, type PayoutRow } from '../queries/payouts.ts';
import { applyPayoutMove } from './payout-move.ts';
import { moveRefusal } from './payouts.ts';

const ANSWER_MS = 5000;

/** The last four characters of the account the affiliate is paid to (all the payments service is given of it). */
function destinationLast4(details: PayoutDetails): string {
  const account =
    details.method === 'paypal'
      ? details.paypal_email
      : 'iban' in details
        ? details.iban.replace(/\s+/g, '')
        : details.account_number;
  return account.slice(-4);
}

/**
 * Sends a pending payout with method `platform`: the payments service moves its amount from the merchant's connected
 * account through the ledger to the affiliate's bank (asked by request/reply, idempotent per payout, so a retry after
 * any failure is safe), then the payout is marked sent with the ledger payout as its reference. paid or failed follow
 * when the payments service reports the ledger payout's outcome (handleSettled).
 */
export async function sendThroughPlatform(
  sql: Sql,
  nc: NatsConnection,
  prefix: string,
  deps: CommissionsDeps,
  merchantId: string,
  payoutId: string,
  requestId: string,
): Promise<{ payout: PayoutRow; changed: boolean }> {
  if (!isId('po', payoutId)) throw notFound('payout');
  const current = await findPayout(sql, merchantId, payoutId);
  if (!current) throw notFound('payout');
  if (current.status === 'sent' && current.method === 'platform') return { payout: current, changed: false };
  // Refused moves are refused before any money moves (a form stored since the payout was held releases it).
  let held = current.held_reason;
  if (held && (await hasValidTaxForm(sql, merchantId, current.affiliate_id))) held = null;
  const refusal = moveRefusal(current.status, 'sent', held);
  if (refusal) throw new ApiError('CONFLICT', refusal);
  const details = await readPayoutDetails(sql, deps.vaultKeys, merchantId, current.affiliate_id);
  if (!details)
    throw new ApiError('CONFLICT', 'The affiliate has no payout details on file to be paid through the platform');
  const request: AffiliatePayoutRequest = {
    request_id: requestId,
    deadline: Date.now() + ANSWER_MS,
    merchant_id: merchantId,
    payout_id: payoutId,
    affiliate_id: current.affiliate_id,
    amount: current.amount,
    currency: current.currency,
    destination_last4: destinationLast4(details),
  };
  const answer = await nc
    .request(PLATFORM_PAYOUT_SUBJECTS.pay(prefix), encodeJson(request), { timeout: ANSWER_MS })
    .catch(() => null);
  if (!answer) throw new ApiError('UNAVAILABLE', 'The payment service did not answer; try again');
  if (answer.headers?.get(RPC_OUTCOME_HEADER) !== 'ok') {
    const refused = decodeJson<PaymentsRpcError>(answer.data);
    if (refused.status >= 500) throw new ApiError('UNAVAILABLE', 'The payment service is unavailable; try again');
    throw new ApiError('CONFLICT', `The payout cannot be paid through the platform: ${refused.error.message}`);
  }
  const ledger = decodeJson<AffiliatePayoutReply>(answer.data);
  return sql.begin((tx) =>
    applyPayoutMove(
      tx,
      merchantId,
      payoutId,
      { status: 'sent', method: 'platform', reference: ledger.ledger_payout_id },
      deps.now(),
    ),
  );
}

/**
 * Answers the payments service's reports of ledger payouts that settled: the payout moves to paid (its commissions
 * paid) or failed (its commissions approved again), with its webhook. A report for a payout already so moved changes
 * nothing and is acknowledged too; one that cannot apply (the payout is gone, or no longer sent) is acknowledged and
 * logged, since sending it again would not change that.
 */
export function serveSettledReports(
  sql: Sql,
  nc: NatsConnection,
  prefix: string,
  deps: CommissionsDeps,
  log: Logger,
): Worker {
  const inFlight = new Set<Promise<void>>();
  const answer = async (data: Uint8Array, respond: (ok: boolean) => void) => {
    const report = decodeJson<PayoutSettledRequest>(data);
    try {
      const { changed } = await sql.begin(async (tx) => {
        // The ledger paid a payout this service never saw sent (it stopped between the payment service's answer and
        // its own commit): it is sent first, as it was.
        const current = isId('po', report.payout_id)
          ? await findPayout(tx, report.merchant_id, report.payout_id)
          : undefined;
        if (current?.status === 'pending')
          await applyPayoutMove(
            tx,
            report.merchant_id,
            report.payout_id,
            { status: 'sent', method: 'platform', reference: report.ledger_payout_id },
            deps.now(),
          );
        return applyPayoutMove(
          tx,
          report.merchant_id,
          report.payout_id,
          report.status === 'paid'
            ? { status: 'paid' }
            : { status: 'failed', failure_reason: report.failure_reason ?? 'payout_failed' },
          deps.now(),
          { byLedger: true },
        );
      });
      if (changed) outboxCommitted(sql);
      log.info('platform payout settled', { payout_id: report.payout_id, status: report.status, changed });
      respond(true);
    } catch (err) {
      if (err instanceof ApiError && (err.code === 'NOT_FOUND' || err.code === 'CONFLICT')) {
        log.warn('a platform payout report does not apply', {
          payout_id: report.payout_id,
          status: report.status,
          err,
        });
        return respond(true);
      }
      log.warn('a platform payout report failed; the payments service sends it again', { err });
      respond(false);
    }
  };
  const subscription: Subscription = nc.subscribe(PLATFORM_PAYOUT_SUBJECTS.settled(prefix), {
    queue: 'commissions',
    callback: (err, msg) => {
      if (err) return log.error('platform payout report subscription error', { err });
      const work = answer(msg.data, (ok) => {
        const h = headers();
        h.set(RPC_OUTCOME_HEADER, ok ? 'ok' : 'error');
        msg.respond(encodeJson({}), { headers: h });
      }).catch((e: unknown) => log.error('platform payout report', { err: e }));
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    },
  });
  return {
    async stop() {
      await subscription.drain().catch(() => {});
      await Promise.all([...inFlight]);
    },
  };
}
