import { api } from '@platform/shared/api';
import { defineOperation } from '@platform/shared/operation';
import type { DispatcherDeps } from '../deps.ts';
import { replayOne } from '../endpoints.ts';

export const replayDeliveryOperation = (deps: DispatcherDeps) =>
  defineOperation(api.replayWebhookDelivery, async (ctx, { params }) => {
    const replayed = await replayOne(ctx.sql, ctx.merchantId, params.delivery_id);
    await deps.hints.publish(replayed);
    ctx.log.info('webhook delivery replayed', { delivery_id: params.delivery_id, replayed: replayed.length });
    return { outcome: 'ok', body: { replayed: replayed.length } };
  });
