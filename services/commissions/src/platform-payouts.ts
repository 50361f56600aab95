import type { NatsConnection } from '@nats-io/transport-node';
import { PLATFORM_PAYOUT_SUBJECTS, RPC_OUTCOME_HEADER } from '@platform/shared/catalogue';
import type { Queryable, Sql } from '@platform/shared/db';
import { callerDeadline, withoutDeadline } from '@platform/shared/deadline';
import { ApiError, notFound } from '@platform/shared/errors';
import { isId, newId } from '@platform/shared/ids';
import type { Logger } from '@platform/shared/log';
import { decodeJson, encodeJson } from '@platform/shared/nats';
import { enqueueEvents, outboxCommitted } from '@platform/shared/outbox';
import { hasValidTaxForm, readPayoutDetails, type PayoutDetails } from '@platform/shared/payee';
import type { PaymentsRpcError } from '@platform/shared/payments/errors';
import type { AffiliatePayoutReply, AffiliatePayoutRequest } from '@platform/shared/payments/rpc';
import type { CommissionsDeps } from './deps.ts';
import { commissionEventData } from './present.ts';
import { voidRequestedInPayout } from './queries/clawbacks.ts';
import {
  findPayout,
  lockPayoutCommissions,
  removeVoidedFromPendingPayouts,
  type PayoutRow,
} from './queries/payouts.ts';
import { lockSendState, markSending, revertSending, staleSends } from './queries/platform-sends.ts';
import { followLedger } from './platform-ledger.ts';
import { moveRefusal } from './domain/payouts.ts';

/** How long the payment service has to answer; it drops a request that reaches it later (its deadline). */
const ANSWER_MS = 5000;
/**
 * The payment service's deadline ends this long before the caller's, so that money it moves is answered, and
 * recorded, while the caller still waits: never after the gateway answered 503.
 */
const CALLER_MARGIN_MS = 300;
/** After a request's deadline, the time it may still take the payment service to commit what it had started. */
const IN_FLIGHT_GRACE_MS = 5000;
/** A payout left sending this long (no answer came, or its service stopped) is asked about again in the background. */
const SENDING_RECHECK_AFTER_MS = 60_000;
/** Payouts the background pass asks about in one pass. */
const RECHECK_BATCH = 20;

interface PlatformSender {
  sql: Sql;
  nc: NatsConnection;
  prefix: string;
  deps: CommissionsDeps;
  log: Logger;
}

/** One request to the payment service, claimed: the payout is `sending` and this request is its latest. */
interface Claim {
  merchantId: string;
  payoutId: string;
  affiliateId: string;
  amount: string;
  currency: string;
  destinationLast4: string;
  deadline: Date;
  /** The deadline of the request before it, when the payout was already sending (that one may still move money). */
  earlierDeadline: Date | null;
}

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
 * Claims the payout for a request to the payment service, in one committed transaction under the payout's row lock
 * (its commissions locked first, as every move does): a pending payout that may be sent becomes `sending` (method
 * platform), so a cancel or a void that comes later sees it; one already sending is claimed again by this request
 * (same destination). Answers the payout itself when there is nothing to ask: sent through the platform already, or
 * (with `staleBefore`, the background pass) no longer sending or asked about since.
 */
async function claim(
  s: PlatformSender,
  merchantId: string,
  payoutId: string,
  staleBefore?: Date,
): Promise<Claim | { payout: PayoutRow | undefined }> {
  return s.sql.begin(async (tx) => {
    if (!(await findPayout(tx, merchantId, payoutId))) throw notFound('payout');
    await lockPayoutCommissions(tx, merchantId, payoutId);
    const state = (await lockSendState(tx, merchantId, payoutId))!;
    if (staleBefore && !(state.status === 'sending' && state.send_attempted_at! < staleBefore))
      return { payout: undefined };
    if (state.status === 'sent' && state.method === 'platform')
      return { payout: await findPayout(tx, merchantId, payoutId) };
    let last4 = state.send_destination_last4;
    if (state.status !== 'sending') {
      // Refused moves are refused before any money moves (a form stored since the payout was held releases it).
      let held = state.held_reason;
      if (held && (await hasValidTaxForm(tx, merchantId, state.affiliate_id))) held = null;
      const refusal = moveRefusal(state.status, 'sent', held);
      if (refusal) throw new ApiError('CONFLICT', refusal);
      // The bank may hold the exported file and pay it from there: sending it too would pay it twice.
      if (state.exported_at)
        throw new ApiError('CONFLICT', 'The payout was exported; mark it sent by hand (method manual)');
      const details = await readPayoutDetails(tx, s.deps.vaultKeys, merchantId, state.affiliate_id);
      if (!details)
        throw new ApiError('CONFLICT', 'The affiliate has no payout details on file to be paid through the platform');
      last4 = destinationLast4(details);
    }
    const caller = callerDeadline();
    const deadline = new Date(Math.min(Date.now() + ANSWER_MS, caller === null ? Infinity : caller - CALLER_MARGIN_MS));
    // Too late to ask and hear back: rolled back, nothing claimed.
    if (deadline.getTime() <= Date.now())
      throw new ApiError('UNAVAILABLE', 'No time is left to ask the payment service; try again');
    await markSending(tx, merchantId, payoutId, { at: s.deps.now(), deadline, destinationLast4: last4! });
    return {
      merchantId,
      payoutId,
      affiliateId: state.affiliate_id,
      amount: state.amount,
      currency: state.currency,
      destinationLast4: last4!,
      deadline,
      earlierDeadline: state.status === 'sending' ? state.send_deadline : null,
    };
  });
}

/**
 * The payment service refused the claimed request and no money moved: the payout is pending again, and the refunds
 * and voids recorded while it was sending are voided now and taken out of it (its amount recomputed), as a failed or
 * canceled payout does with them; left approved in a pending payout, they would be paid and the merchant's void
 * would change nothing. Commissions are locked before the payout, the order of every payout move. Answers whether
 * the payout moved (not when another request claimed it since).
 */
async function revertRefused(tx: Queryable, c: Claim, at: Date): Promise<boolean> {
  await lockPayoutCommissions(tx, c.merchantId, c.payoutId);
  if (!(await revertSending(tx, c.merchantId, c.payoutId, c.deadline))) return false;
  const voided = await voidRequestedInPayout(tx, c.merchantId, c.payoutId, at);
  await removeVoidedFromPendingPayouts(
    tx,
    c.merchantId,
    voided.map((row) => row.id),
    at,
  );
  await enqueueEvents(
    tx,
    voided.map((row) => ({
      merchantId: c.merchantId,
      type: 'commission.voided' as const,
      data: commissionEventData(row),
    })),
  );
  return true;
}

/**
 * Asks the payment service to pay a claimed payout (idempotent per payout: asked again, it answers the ledger payout
 * it made the first time) and records its answer. Made: the payout follows its ledger payout (sent). Refused for good
 * (no connected account, not enough funds): back to pending, 409, unless another request claimed it since or an
 * earlier one may still be under way (then it stays sending, 503, and its answer or the next one decides). No answer:
 * it stays sending, 503; a retry of the request or the background pass asks again.
 */
async function ask(s: PlatformSender, c: Claim, requestId: string): Promise<{ payout: PayoutRow; changed: boolean }> {
  const request: AffiliatePayoutRequest = {
    request_id: requestId,
    deadline: c.deadline.getTime(),
    merchant_id: c.merchantId,
    payout_id: c.payoutId,
    affiliate_id: c.affiliateId,
    amount: c.amount,
    currency: c.currency,
    destination_last4: c.destinationLast4,
  };
  const answer = await s.nc
    .request(PLATFORM_PAYOUT_SUBJECTS.pay(s.prefix), encodeJson(request), {
      timeout: Math.max(1, c.deadline.getTime() - Date.now()),
    })
    .catch(() => null);
  if (!answer)
    throw new ApiError('UNAVAILABLE', 'The payment service did not answer; the payout stays sending: try again');
  if (answer.headers?.get(RPC_OUTCOME_HEADER) !== 'ok') {
    const refused = decodeJson<PaymentsRpcError>(answer.data);
    if (refused.status >= 500)
      throw new ApiError('UNAVAILABLE', 'The payment service is unavailable; the payout stays sending: try again');
    // Money moved for this payout, but another amount: not a refusal (it must not go back to pending and be paid
    // again), a mismatch for an operator to settle; it stays sending.
    if (refused.error.code === 'amount_mismatch') {
      reportMismatch(s, c, refused.error.message);
      throw new ApiError(
        'CONFLICT',
        `The payout was paid through the platform with another amount: ${refused.error.message}`,
      );
    }
    const earlierDone = !c.earlierDeadline || c.earlierDeadline.getTime() + IN_FLIGHT_GRACE_MS < Date.now();
    const reverted = earlierDone && (await s.sql.begin((tx) => revertRefused(tx, c, s.deps.now())));
    if (!reverted)
      throw new ApiError('UNAVAILABLE', 'Another request to pay the payout may still be under way; try again');
    outboxCommitted(s.sql);
    s.log.info('platform payout refused by the payment service; pending again', {
      payout_id: c.payoutId,
      code: refused.error.code,
    });
    throw new ApiError('CONFLICT', `The payout cannot be paid through the platform: ${refused.error.message}`);
  }
  const ledger = decodeJson<AffiliatePayoutReply>(answer.data);
  // The money moved: recorded even past the caller's deadline (the gateway may have answered 503), never rolled
  // back by its check; a retry then finds the payout sent.
  const followed = await withoutDeadline(() =>
    s.sql.begin((tx) =>
      followLedger(
        tx,
        c.merchantId,
        c.payoutId,
        { id: ledger.ledger_payout_id, status: 'made', amount: ledger.amount, currency: ledger.currency },
        s.deps.now(),
      ),
    ),
  );
  if (followed.mismatch) {
    reportMismatch(s, c, followed.mismatch, ledger.ledger_payout_id);
    throw new ApiError('CONFLICT', `The payout was paid through the platform, but ${followed.mismatch}`);
  }
  if (followed.changed) outboxCommitted(s.sql);
  return { payout: followed.payout!, changed: followed.changed };
}

/** A payout that disagrees with its ledger payout: logged at error level and counted (the alert fires on it). */
function reportMismatch(s: PlatformSender, c: Claim, mismatch: string, ledgerPayoutId?: string): void {
  s.deps.payoutMetrics?.mismatch();
  s.log.error('a platform payout disagrees with its ledger payout', {
    merchant_id: c.merchantId,
    payout_id: c.payoutId,
    ledger_payout_id: ledgerPayoutId,
    mismatch,
  });
}

/**
 * Sends a payout with method `platform` (PATCH {status: sent, method: platform}): claimed `sending` first, then the
 * payment service moves its amount from the merchant's connected account through the ledger to the affiliate's
 * bank, then it is sent with the ledger payout as its reference; paid or failed follow when the payment service
 * reports the ledger payout's outcome (platform-settled.ts). The same request on a sending payout asks again and
 * completes it; on one sent this way it changes nothing.
 */
export async function sendThroughPlatform(
  s: PlatformSender,
  merchantId: string,
  payoutId: string,
  requestId: string,
): Promise<{ payout: PayoutRow; changed: boolean }> {
  if (!isId('po', payoutId)) throw notFound('payout');
  const claimed = await claim(s, merchantId, payoutId);
  if ('payout' in claimed) return { payout: claimed.payout!, changed: false };
  return ask(s, claimed, requestId);
}

/**
 * The background pass: every payout left sending for longer than SENDING_RECHECK_AFTER_MS (its answer was lost, or
 * the service stopped before recording it) is claimed again and the payment service asked again, which settles it
 * as the ledger has it: sent when the money moved, pending again when it was refused. Replicas share the work (a
 * payout claimed by one is no longer stale to the others). Answers how many it settled.
 */
export async function recheckSendingPayouts(s: PlatformSender): Promise<number> {
  const before = new Date(s.deps.now().getTime() - SENDING_RECHECK_AFTER_MS);
  let settled = 0;
  for (const { merchant_id, id } of await staleSends(s.sql, before, RECHECK_BATCH)) {
    const claimed = await claim(s, merchant_id, id, before);
    if ('payout' in claimed) continue;
    try {
      const { payout } = await ask(s, claimed, newId('req'));
      s.log.info('platform payout left sending settled by the background pass', {
        payout_id: id,
        status: payout.status,
      });
      settled++;
    } catch (err) {
      if (err instanceof ApiError && err.code === 'CONFLICT') settled++;
      else s.log.warn('platform payout still sending; asked again on a later pass', { payout_id: id, err });
    }
  }
  return settled;
}
