import { api } from '@platform/shared/api';
import { defineOperation } from '@platform/shared/operation';
import type { RecordEvent } from '../recording.ts';

/**
 * POST /api/v1/events. The event and its `conversion.recorded` outbox row are written in one statement, so the
 * commissions service hears of every stored event exactly once and of nothing that was rolled back. Idempotent on
 * (merchant, event_type, external_id): INSERT … ON CONFLICT DO NOTHING lets one of any number of concurrent
 * requests insert; the others compare their body's hash with the stored one. Concurrent requests are recorded
 * together by the service's recorder (recording.ts, made in the service's wiring), each with its own outcome.
 */
export const recordEventOperation = (record: RecordEvent) =>
  defineOperation(api.recordEvent, async (ctx, { body }) => record(ctx.merchantId, body, ctx.log));
