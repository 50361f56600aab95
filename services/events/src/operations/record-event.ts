import { api } from '@platform/shared/api';
import type { Sql } from '@platform/shared/db';
import { defineOperation } from '@platform/shared/operation';
import { createEventRecorder, type RecordEvent } from '../recording.ts';

/**
 * POST /api/v1/events. The event and its `conversion.recorded` outbox row are written in one statement, so the
 * commissions service hears of every stored event exactly once and of nothing that was rolled back. Idempotent on
 * (merchant, event_type, external_id): INSERT … ON CONFLICT DO NOTHING lets one of any number of concurrent
 * requests insert; the others compare their body's hash with the stored one. Concurrent requests are recorded
 * together (recording.ts), each with its own outcome.
 */
export const recordEventOperation = (attributionSql: Sql, batchIntervalMs: number) => {
  // One recorder per pool: the operation is bound to a pool only when it runs.
  const recorders = new WeakMap<Sql, RecordEvent>();
  return defineOperation(api.recordEvent, async (ctx, { body }) => {
    let record = recorders.get(ctx.sql);
    if (!record) recorders.set(ctx.sql, (record = createEventRecorder(ctx.sql, attributionSql, batchIntervalMs)));
    return record(ctx.merchantId, body, ctx.log);
  });
};
