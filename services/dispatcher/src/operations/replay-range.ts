import { api } from '@platform/shared/api';
import { defineOperation } from '@platform/shared/operation';
import type { DispatcherDeps } from '../deps.ts';
import { replayRange } from '../endpoints.ts';

export const replayRangeOperation = (deps: DispatcherDeps) =>
  defineOperation(api.replayWebhookDeliveries, async (ctx, { params, body }) => {
    const replayed = await replayRange(ctx.sql, ctx.merchantId, params.endpoint_id, body.since, body.until);
    await deps.hints.publish(replayed);
    ctx.log.info('webhook deliveries replayed', { endpoint_id: params.endpoint_id, replayed: replayed.length });
    return { outcome: 'ok', body: { replayed: replayed.length } };
  });
