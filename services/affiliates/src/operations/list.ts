import { api } from '@platform/shared/api';
import { keysetPage } from '@platform/shared/cursor';
import { defineOperation } from '@platform/shared/operation';
import type { AffiliatesDeps } from '../deps.ts';
import { presentAffiliate } from '../present.ts';
import { listAffiliates } from '../queries/affiliates.ts';

export const listAffiliatesOperation = (deps: AffiliatesDeps) =>
  defineOperation(api.listAffiliates, async (ctx, { query }) => ({
    outcome: 'ok',
    body: await keysetPage({
      key: deps.cursorKey,
      scope: {
        merchantId: ctx.merchantId,
        list: 'affiliates',
        filters: {
          status: query.status ?? null,
          // Only when given, so that cursors of lists filtered by status alone stay what they were.
          ...(query.email ? { email: query.email.toLowerCase() } : {}),
          ...(query.parent_id ? { parent_id: query.parent_id } : {}),
        },
      },
      cursor: query.cursor,
      limit: query.limit ?? 25,
      fetch: (after, limit) =>
        listAffiliates(ctx.sql, ctx.merchantId, {
          status: query.status,
          email: query.email,
          parentId: query.parent_id,
          after,
          limit,
        }),
      present: (row) => presentAffiliate(row, deps.publicBaseUrl),
    }),
  }));
