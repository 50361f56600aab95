import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { headers } from '@nats-io/nats-core';
import { PLATFORM_PAYOUT_SUBJECTS, RPC_OUTCOME_HEADER } from '@platform/shared/catalogue';
import type { Sql } from '@platform/shared/db';
import { ApiError } from '@platform/shared/errors';
import type { Logger } from '@platform/shared/log';
import { decodeJson, encodeJson } from '@platform/shared/nats';
import { outboxCommitted } from '@platform/shared/outbox';
import type { PayoutSettledRequest } from '@platform/shared/payments/rpc';
import type { Worker } from '@platform/shared/service';
import type { CommissionsDeps } from '../deps.ts';
import { followLedger } from './platform-ledger.ts';

/**
 * Answers the payment service's reports of ledger payouts that settled, whatever state the payout is in: pending or
 * sending (the answer to the send never reached this service's commit) → sent, then paid or failed; sent → paid
 * (its commissions paid) or failed (its commissions approved again), with its webhooks; already so → nothing. A
 * payout that disagrees with its ledger payout (canceled here but paid there, paid here but failed there, …) is logged
 * at error level, counted in platform_payout_mismatches_total and acknowledged: reporting it again would not change
 * it, an operator has to. A report that could not be applied (the database) is answered `error` and sent again.
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
    const ids = {
      merchant_id: report.merchant_id,
      payout_id: report.payout_id,
      ledger_payout_id: report.ledger_payout_id,
    };
    try {
      const { changed, mismatch, payout } = await sql.begin((tx) =>
        followLedger(
          tx,
          report.merchant_id,
          report.payout_id,
          { id: report.ledger_payout_id, status: report.status, failureReason: report.failure_reason },
          deps.now(),
        ),
      );
      if (mismatch) {
        deps.payoutMetrics?.mismatch();
        log.error('a platform payout disagrees with its ledger payout', {
          ...ids,
          reported: report.status,
          status: payout?.status,
          mismatch,
        });
      } else {
        if (changed) outboxCommitted(sql);
        log.info('platform payout settled', { ...ids, status: report.status, changed });
      }
      respond(true);
    } catch (err) {
      // A move refused is a disagreement the checks above did not foresee: the same, never sent again.
      if (err instanceof ApiError) {
        deps.payoutMetrics?.mismatch();
        log.error('a platform payout disagrees with its ledger payout', { ...ids, reported: report.status, err });
        return respond(true);
      }
      log.warn('a platform payout report failed; the payments service sends it again', { ...ids, err });
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
