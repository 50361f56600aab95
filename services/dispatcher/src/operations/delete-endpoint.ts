import { api } from '@platform/shared/api';
import { notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { deleteEndpoint } from '../queries/endpoints.ts';

export const deleteEndpointOperation = () =>
  defineOperation(api.deleteWebhookEndpoint, async (ctx, { params }) => {
    const deleted =
      isId('we', params.endpoint_id) && (await deleteEndpoint(ctx.sql, ctx.merchantId, params.endpoint_id));
    if (!deleted) throw notFound('webhook endpoint');
    ctx.log.info('webhook endpoint deleted', { endpoint_id: params.endpoint_id });
    return { outcome: 'no_content' };
  });
