import { Type, type Static } from '@sinclair/typebox';
import { CommonEnv, TopologyEnv, loadConfig, OutboxEnv, PUBLIC_BASE_URL } from '@platform/shared/config';

export const AffiliatesEnv = Type.Object({
  ...CommonEnv,
  ...TopologyEnv,
  OPS_PORT: Type.Integer({ default: 9101, minimum: 0, maximum: 65535, description: '/healthz, /readyz, /metrics' }),
  PUBLIC_BASE_URL,
  OUTBOX_RELAY: Type.Boolean({ default: true, description: 'run the outbox relay in this process' }),
  ...OutboxEnv,
  VAULT_SUPERSEDED_RETENTION_DAYS: Type.Integer({
    default: 30,
    minimum: 1,
    maximum: 3650,
    description:
      'payout details and TINs replaced by newer ones are deleted from the vault this long after (hourly), unless ' +
      'a row still references them',
  }),
});
export type AffiliatesConfig = Static<typeof AffiliatesEnv>;

export const loadAffiliatesConfig = (env: NodeJS.ProcessEnv = process.env): AffiliatesConfig =>
  loadConfig(AffiliatesEnv, env);
