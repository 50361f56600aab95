import { Type, type Static } from '@sinclair/typebox';
import { CommonEnv, TopologyEnv, loadConfig, OutboxEnv, PUBLIC_BASE_URL } from '@platform/shared/config';

export const CommissionsEnv = Type.Object({
  ...CommonEnv,
  ...TopologyEnv,
  OPS_PORT: Type.Integer({ default: 9103, minimum: 0, maximum: 65535, description: '/healthz, /readyz, /metrics' }),
  PUBLIC_BASE_URL,
  OUTBOX_RELAY: Type.Boolean({ default: true, description: 'run the outbox relay in this process' }),
  ...OutboxEnv,
  CONVERSION_CONCURRENCY: Type.Integer({
    default: 2,
    minimum: 1,
    maximum: 64,
    description: 'transactions of conversion.recorded messages one replica runs at the same time',
  }),
  CONVERSION_BATCH_MAX: Type.Integer({
    default: 128,
    minimum: 1,
    maximum: 512,
    description:
      "the most conversion.recorded messages one transaction processes; each takes up to four advisory locks until its commit, so a replica holds at most CONVERSION_CONCURRENCY × CONVERSION_BATCH_MAX × 4 entries of Postgres's lock table",
  }),
  CONVERSION_BATCH_INTERVAL_MS: Type.Integer({
    default: 50,
    minimum: 0,
    maximum: 1000,
    description:
      'least time between the starts of two batches of conversion.recorded messages that are not full: a conversion after a quiet spell is processed at once, under load each batch carries what arrived in the interval (0: every turn of the event loop)',
  }),
  CONVERSION_RECONCILE_AFTER_MS: Type.Integer({
    default: 60_000,
    minimum: 100,
    maximum: 86_400_000,
    description:
      'a conversion.recorded published this long ago and still unprocessed (lost by the stream) is processed from the outbox',
  }),
  HOLD_SCHEDULER_INTERVAL_MS: Type.Integer({
    default: 60_000,
    minimum: 1000,
    maximum: 3_600_000,
    description: 'how often a replica approves pending commissions whose hold period has ended',
  }),
  PAYOUT_SCHEDULER_INTERVAL_MS: Type.Integer({
    default: 3_600_000,
    minimum: 1000,
    maximum: 86_400_000,
    description:
      "how often a replica checks the merchants' payout_day (payouts created once per merchant and month, whichever replica comes first) and releases payouts held for a tax form now on file",
  }),
});
export type CommissionsConfig = Static<typeof CommissionsEnv>;

export const loadCommissionsConfig = (env: NodeJS.ProcessEnv = process.env): CommissionsConfig =>
  loadConfig(CommissionsEnv, env);
