import type { NatsConnection } from '@nats-io/transport-node';
import type { PayoutMetrics } from './metrics.ts';

/** The service's notion of the current time: every timestamp it writes and every hold-period decision use it. */
export type Clock = () => Date;

/** What the commissions operations and workers need besides the database. */
export interface CommissionsDeps {
  publicBaseUrl: string;
  /** Signs list cursors. */
  cursorKey: Buffer;
  now: Clock;
  /** ENCRYPTION_KEY then ENCRYPTION_KEYS_PREVIOUS: the payout details of the CSV export are decrypted with them. */
  vaultKeys: readonly Buffer[];
  /** NATS and the subject prefix, for payouts with method platform; set once the service's connection is up. */
  nats?: { nc: NatsConnection; prefix: string };
  /** platform_payout_mismatches_total; set with `nats`. */
  payoutMetrics?: PayoutMetrics;
}
