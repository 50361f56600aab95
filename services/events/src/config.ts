import { Type, type Static } from '@sinclair/typebox';
import { CommonEnv, TopologyEnv, loadConfig, OutboxEnv } from '@platform/shared/config';

export const EventsEnv = Type.Object({
  ...CommonEnv,
  ...TopologyEnv,
  OPS_PORT: Type.Integer({ default: 9102, minimum: 0, maximum: 65535, description: '/healthz, /readyz, /metrics' }),
  OUTBOX_RELAY: Type.Boolean({
    default: true,
    description: 'run the outbox relay in this process (publishes conversion.recorded)',
  }),
  ...OutboxEnv,
  VISIT_RETENTION_DAYS: Type.Integer({
    default: 400,
    minimum: 366,
    maximum: 3650,
    description:
      'referral visits older than this are deleted (hourly); longer than the longest attribution window (365 days)',
  }),
});
export type EventsConfig = Static<typeof EventsEnv>;

export const loadEventsConfig = (env: NodeJS.ProcessEnv = process.env): EventsConfig => loadConfig(EventsEnv, env);
