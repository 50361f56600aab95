import { api } from '@platform/shared/api';
import { defineOperation } from '@platform/shared/operation';
import type { DispatcherDeps } from '../deps.ts';
import { rotateSecret } from '../endpoints.ts';

export const rotateSecretOperation = (deps: DispatcherDeps) =>
  defineOperation(api.rotateWebhookEndpointSecret, async (ctx, { params }) => {
    const endpoint = await rotateSecret(ctx.sql, deps, ctx.merchantId, params.endpoint_id);
    ctx.log.info('webhook secret rotated', { endpoint_id: endpoint.id });
    return { outcome: 'ok', body: endpoint };
  });
