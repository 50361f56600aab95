import { api } from '@platform/shared/api';
import { defineOperation } from '@platform/shared/operation';
import type { DispatcherDeps } from '../deps.ts';
import { sendTestEvent } from '../endpoints.ts';

export const sendTestOperation = (deps: DispatcherDeps) =>
  defineOperation(api.sendWebhookTestEvent, async (ctx, { params, body }) => {
    const { delivery, created } = await sendTestEvent(ctx.sql, ctx.merchantId, params.endpoint_id, body.event_type);
    await deps.hints.publish(created);
    ctx.log.info('webhook test event created', { endpoint_id: params.endpoint_id, delivery_id: delivery.id });
    return { outcome: 'created', body: delivery };
  });
