import { api } from '@platform/shared/api';
import { keysetPage } from '@platform/shared/cursor';
import { defineOperation } from '@platform/shared/operation';
import type { DispatcherDeps } from '../deps.ts';
import { presentEndpoint } from '../present.ts';
import { listEndpoints } from '../queries/endpoints.ts';

export const listEndpointsOperation = (deps: DispatcherDeps) =>
  defineOperation(api.listWebhookEndpoints, async (ctx, { query }) => ({
    outcome: 'ok',
    body: await keysetPage({
      key: deps.cursorKey,
      scope: { merchantId: ctx.merchantId, list: 'webhook_endpoints', filters: {} },
      cursor: query.cursor,
      limit: query.limit ?? 25,
      fetch: (after, limit) => listEndpoints(ctx.sql, ctx.merchantId, { after, limit }),
      present: presentEndpoint,
    }),
  }));
