import type { NatsConnection } from '@nats-io/transport-node';
import type { Registry } from 'prom-client';
import { PLATFORM_PAYOUT_SUBJECTS } from '@platform/shared/catalogue';
import type { Sql } from '@platform/shared/db';
import { ApiError } from '@platform/shared/errors';
import type { Logger } from '@platform/shared/log';
import { outboxCommitted } from '@platform/shared/outbox';
import type { PayoutSettledRequest } from '@platform/shared/payments/rpc';
import { serveRequests, type Reply } from '@platform/shared/request-server';
import type { Worker } from '@platform/shared/service';
import type { CommissionsDeps } from './deps.ts';
import { followLedger } from './platform-ledger.ts';

/**
 * Answers the payment service's reports of ledger payouts that settled, whatever state the payout is in: pending or
 * sending (the answer to the send never reached this service's commit) → sent, then paid or failed; sent → paid
 * (its commissions paid) or failed (its commissions approved again), with its webhooks; already so → nothing. A
 * payout that disagrees with its ledger payout (canceled here but paid there, paid here but failed there, …) is logged
 * at error level, counted in platform_payout_mismatches_total and acknowledged: reporting it again would not change
 * it, an operator has to. A report that could not be applied (the database) is answered `error` and sent again.
 */
export function serveSettledReports(opts: {
  sql: Sql;
  nc: NatsConnection;
  prefix: string;
  deps: CommissionsDeps;
  log: Logger;
  registry: Registry;
}): Worker {
  const { sql, deps, log } = opts;
  const acknowledged: Reply = { outcome: 'ok', body: {} };
  const settle = async (report: PayoutSettledRequest): Promise<Reply> => {
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
      return acknowledged;
    } catch (err) {
      // A move refused is a disagreement the checks above did not foresee: the same, never sent again.
      if (err instanceof ApiError) {
        deps.payoutMetrics?.mismatch();
        log.error('a platform payout disagrees with its ledger payout', { ...ids, reported: report.status, err });
        return acknowledged;
      }
      log.warn('a platform payout report failed; the payments service sends it again', { ...ids, err });
      throw new ApiError('UNAVAILABLE', 'The report could not be applied; send it again', undefined, { cause: err });
    }
  };
  return serveRequests({
    nc: opts.nc,
    routes: [
      {
        subject: PLATFORM_PAYOUT_SUBJECTS.settled(opts.prefix),
        queue: 'commissions',
        name: 'platform_payout_settled',
        run: settle,
      },
    ],
    log,
    registry: opts.registry,
    metrics: {
      label: 'operation',
      total: {
        name: 'platform_payout_reports_total',
        help: 'Reports of settled platform payouts answered, by result code',
      },
      duration: { name: 'platform_payout_report_duration_seconds', help: 'Time to apply a settled payout report' },
    },
  });
}
