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
  EVENT_BATCH_INTERVAL_MS: Type.Integer({
    default: 4,
    minimum: 0,
    maximum: 1000,
    description:
      'least time between the starts of two batches of POST /api/v1/events recordings that are not full: an event after a quiet spell is recorded at once, under load each batch carries what arrived in the interval (0: every turn of the event loop)',
  }),
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
