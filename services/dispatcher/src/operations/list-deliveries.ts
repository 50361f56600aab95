import { api } from '@platform/shared/api';
import { defineOperation } from '@platform/shared/operation';
import { WEBHOOK_LOG_SIZE } from '@platform/shared/webhooks';
import { loadEndpoint } from '../endpoints.ts';
import { presentDelivery } from '../present.ts';
import { listDeliveries } from '../queries/delivery-log.ts';

export const listDeliveriesOperation = () =>
  defineOperation(api.listWebhookDeliveries, async (ctx, { params, query }) => {
    const endpoint = await loadEndpoint(ctx.sql, ctx.merchantId, params.endpoint_id);
    const rows = await listDeliveries(ctx.sql, ctx.merchantId, endpoint.id, {
      status: query.status,
      limit: query.limit ?? WEBHOOK_LOG_SIZE,
    });
    return { outcome: 'ok', body: { data: rows.map((r) => presentDelivery(r.delivery, r.attempts)) } };
  });
