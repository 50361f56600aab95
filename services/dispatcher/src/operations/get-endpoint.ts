import { api } from '@platform/shared/api';
import { defineOperation } from '@platform/shared/operation';
import { loadEndpoint } from '../endpoints.ts';
import { presentEndpoint } from '../present.ts';

export const getEndpointOperation = () =>
  defineOperation(api.getWebhookEndpoint, async (ctx, { params }) => ({
    outcome: 'ok',
    body: presentEndpoint(await loadEndpoint(ctx.sql, ctx.merchantId, params.endpoint_id)),
  }));
