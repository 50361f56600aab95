import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { startPeriodicPurge } from '@platform/shared/purge';
import type { Worker } from '@platform/shared/service';
import { purgeSigninFailures } from './queries.ts';

/**
 * Rows of dashboard_signin_failures are kept SIGNIN_FAILURE_RETENTION_HOURS after their window opened, then deleted
 * (at start, then hourly, in batches). A window counts for 15 minutes only, so a deleted row limits nothing any
 * more; the day kept is for an operator looking into yesterday's guessing. The rows name e-mails and addresses,
 * which is why they are not kept longer.
 */
const SIGNIN_FAILURE_RETENTION_HOURS = 24;

export function startSigninFailurePurge(sql: Sql, log: Logger): Worker {
  return startPeriodicPurge({
    what: 'dashboard sign-in failures',
    log,
    batch: 5000,
    deleteBatch: (limit) => purgeSigninFailures(sql, SIGNIN_FAILURE_RETENTION_HOURS, limit),
  });
}
