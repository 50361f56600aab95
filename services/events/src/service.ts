import { encryptionKey } from '@platform/shared/config';
import { createHmacKey } from '@platform/shared/crypto';
import { connectDatabase } from '@platform/shared/db';
import { startPartitionMaintenance } from '@platform/shared/partitions';
import type { Logger } from '@platform/shared/log';
import { startService, type ServiceRuntime } from '@platform/shared/service';
import type { EventsConfig } from './config.ts';
import type { EventsDeps } from './deps.ts';
import { createCouponOperation } from './operations/create-coupon.ts';
import { deleteCouponOperation } from './operations/delete-coupon.ts';
import { getClickOperation } from './operations/get-click.ts';
import { getEventOperation } from './operations/get-event.ts';
import { listClicksOperation } from './operations/list-clicks.ts';
import { listEventsOperation } from './operations/list-events.ts';
import { getAnalyticsOperation } from './operations/get-analytics.ts';
import { listCouponsOperation } from './operations/list-coupons.ts';
import { recordEventOperation } from './operations/record-event.ts';
import { startVisitPurge } from './purge-visits.ts';
import { startAnalyticsDrain } from './analytics-drain.ts';
import { startPartitionIndexes } from './partition-indexes.ts';
import { conversionEventPartitions } from './queries/conversion-events.ts';
import { visitPartitions } from './queries/visits.ts';
import { createEventRecorder, EVENT_BATCH_INTERVAL_MS, RECORDING_SLOTS } from './recording.ts';
import { serveTracking } from './serve-tracking.ts';

/** How often pending analytics facts are rolled up: the most GET /api/v1/analytics lags behind what is recorded. */
const ANALYTICS_DRAIN_INTERVAL_MS = 1000;

/** Conversion events, coupons and referral tracking; publishes `conversion.recorded` through its outbox relay. */
export async function startEventsService(config: EventsConfig, log?: Logger): Promise<ServiceRuntime> {
  const master = encryptionKey(config);
  const deps: EventsDeps = {
    cursorKey: createHmacKey(master, 'cursor'),
    ipHashKey: createHmacKey(master, 'ip-hash'),
    visitRetentionDays: config.VISIT_RETENTION_DAYS,
  };
  // The read of every batch's settings and attribution runs on connections of its own that use generic plans
  // (see findAttributionContexts): one per batch recorded at once. Closed after the operations have drained, as a
  // worker.
  const attributionSql = connectDatabase(config.DATABASE_URL, {
    max: RECORDING_SLOTS,
    applicationName: 'events-attribution',
    genericPlans: true,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    lockTimeoutMs: config.DATABASE_LOCK_TIMEOUT_MS,
  });
  return startService({
    name: 'events',
    config,
    outboxRelay: config.OUTBOX_RELAY && config,
    operations: ({ sql }) => [
      recordEventOperation(createEventRecorder(sql, attributionSql, EVENT_BATCH_INTERVAL_MS)),
      createCouponOperation(),
      listCouponsOperation(deps),
      deleteCouponOperation(),
      listEventsOperation(deps),
      getEventOperation(),
      listClicksOperation(deps),
      getClickOperation(deps),
      getAnalyticsOperation(),
    ],
    workers: ({ nc, sql, log: serviceLog, registry }) => [
      serveTracking({ nc, sql, prefix: config.NATS_PREFIX, log: serviceLog, registry, ipHashKey: deps.ipHashKey }),
      startVisitPurge({ sql, log: serviceLog, retentionDays: config.VISIT_RETENTION_DAYS }),
      startAnalyticsDrain({ sql, log: serviceLog, intervalMs: ANALYTICS_DRAIN_INTERVAL_MS, registry }),
      // Conversion events are kept (no retention): only their months ahead are made.
      startPartitionMaintenance({ sql, log: serviceLog, tables: [{ spec: conversionEventPartitions }] }),
      // Months made by a replica of an earlier version get the indexes it did not know.
      startPartitionIndexes({ sql, log: serviceLog, tables: [visitPartitions, conversionEventPartitions] }),
      { stop: () => attributionSql.end({ timeout: 5 }) },
    ],
    log,
  });
}
