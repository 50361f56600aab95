import { api } from '@platform/shared/api';
import { defineOperation } from '@platform/shared/operation';
import type { DispatcherDeps } from '../deps.ts';
import { createEndpoint } from '../endpoints.ts';

export const createEndpointOperation = (deps: DispatcherDeps) =>
  defineOperation(api.createWebhookEndpoint, async (ctx, { body }) => {
    const endpoint = await createEndpoint(ctx.sql, deps, ctx.merchantId, body);
    ctx.log.info('webhook endpoint created', { endpoint_id: endpoint.id });
    return { outcome: 'created', body: endpoint };
  });
