import type { Sql } from '@platform/shared/db';
import type { Logger } from '@platform/shared/log';
import { startPeriodicPurge } from '@platform/shared/purge';
import type { Worker } from '@platform/shared/service';
import { deleteSupersededSecrets } from './queries/vault.ts';

/**
 * Secrets the affiliate no longer uses (payout details or a TIN replaced by newer ones) are kept
 * VAULT_SUPERSEDED_RETENTION_DAYS after being replaced, for disputes over where a payout went, then deleted, at
 * start and then hourly, in batches. A secret some row still references (a superseded tax form's TIN) stays.
 */
export function startVaultPurge(opts: { sql: Sql; log: Logger; retentionDays: number }): Worker {
  return startPeriodicPurge({
    what: 'superseded vault secrets',
    log: opts.log,
    batch: 1000,
    fields: { retention_days: opts.retentionDays },
    deleteBatch: (limit) => deleteSupersededSecrets(opts.sql, opts.retentionDays, limit),
  });
}
