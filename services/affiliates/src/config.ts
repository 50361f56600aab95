import { Type, type Static } from '@sinclair/typebox';
import { CommonEnv, TopologyEnv, loadConfig, OutboxEnv, PUBLIC_BASE_URL } from '@platform/shared/config';

export const AffiliatesEnv = Type.Object({
  ...CommonEnv,
  ...TopologyEnv,
  OPS_PORT: Type.Integer({ default: 9101, minimum: 0, maximum: 65535, description: '/healthz, /readyz, /metrics' }),
  PUBLIC_BASE_URL,
  OUTBOX_RELAY: Type.Boolean({ default: true, description: 'run the outbox relay in this process' }),
  ...OutboxEnv,
});
export type AffiliatesConfig = Static<typeof AffiliatesEnv>;

export const loadAffiliatesConfig = (env: NodeJS.ProcessEnv = process.env): AffiliatesConfig =>
  loadConfig(AffiliatesEnv, env);
