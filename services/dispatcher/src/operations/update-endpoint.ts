import { api } from '@platform/shared/api';
import { defineOperation } from '@platform/shared/operation';
import type { DispatcherDeps } from '../deps.ts';
import { changeEndpoint } from '../endpoints.ts';

export const updateEndpointOperation = (deps: DispatcherDeps) =>
  defineOperation(api.updateWebhookEndpoint, async (ctx, { params, body }) => {
    const endpoint = await changeEndpoint(ctx.sql, deps, ctx.merchantId, params.endpoint_id, body);
    ctx.log.info('webhook endpoint updated', { endpoint_id: endpoint.id, fields: Object.keys(body) });
    return { outcome: 'ok', body: endpoint };
  });
