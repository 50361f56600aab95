import type { Sql } from '@platform/shared/db';
import { databaseGauge, labelledDatabaseGauge } from '@platform/shared/database-gauge';
import type { Registry } from 'prom-client';
import { DISABLED_REASONS, disabledEndpointsByReason, largestBacklogs } from './queries/backlog.ts';
import { dueUnattempted } from './queries/sweep.ts';

/** The endpoints the backlog gauge names at most: the largest backlogs, so that its series stay few. */
const BACKLOG_ENDPOINTS = 50;

/**
 * The delivery gauges an operator watches (deploy/observability): work that should have flowed and has not, the
 * largest backlogs by endpoint, and the disabled endpoints. Each is read from Postgres when /metrics is scraped,
 * never on the delivery path; every replica reads the same numbers, so dashboards take their maximum.
 */
export function registerDeliveryGauges(registry: Registry, sql: Sql): void {
  databaseGauge({
    registry,
    name: 'webhook_deliveries_due_unattempted',
    help: 'Webhook deliveries due now and not being attempted (no live lease), up to 100,000',
    read: async () => (await dueUnattempted(sql)).count,
  });
  databaseGauge({
    registry,
    name: 'webhook_oldest_due_unattempted_age_seconds',
    help: 'Seconds since the oldest due, unattempted webhook delivery fell due (0 when none)',
    read: async () => (await dueUnattempted(sql)).oldestAgeSeconds,
  });
  labelledDatabaseGauge({
    registry,
    name: 'webhook_endpoint_backlog_deliveries',
    help: `Webhook deliveries pending or retrying (up to 100,000), of the ${BACKLOG_ENDPOINTS} endpoints with the most`,
    labelNames: ['endpoint_id', 'merchant_id'],
    read: async () =>
      (await largestBacklogs(sql, BACKLOG_ENDPOINTS)).map((b) => ({
        labels: { endpoint_id: b.endpointId, merchant_id: b.merchantId },
        value: b.deliveries,
      })),
  });
  labelledDatabaseGauge({
    registry,
    name: 'webhook_endpoints_disabled',
    help: 'Disabled webhook endpoints, by reason (manual, gone: a 410 answer, failure_threshold)',
    labelNames: ['reason'],
    read: async () => {
      const counts = await disabledEndpointsByReason(sql);
      return DISABLED_REASONS.map((reason) => ({ labels: { reason }, value: counts[reason] }));
    },
  });
}
