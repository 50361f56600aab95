import { api } from '@platform/shared/api';
import { keysetPage } from '@platform/shared/cursor';
import { defineOperation } from '@platform/shared/operation';
import type { EventsDeps } from '../deps.ts';
import { presentClick } from '../present.ts';
import { listClicks } from '../queries/visits.ts';

/** GET /api/v1/clicks: the merchant's referral clicks within the visit retention, newest first. */
export const listClicksOperation = (deps: EventsDeps) =>
  defineOperation(api.listClicks, async (ctx, { query }) => ({
    outcome: 'ok',
    body: await keysetPage({
      key: deps.cursorKey,
      scope: {
        merchantId: ctx.merchantId,
        list: 'clicks',
        filters: {
          affiliate_id: query.affiliate_id ?? null,
          created_after: query.created_after ?? null,
          created_before: query.created_before ?? null,
        },
      },
      cursor: query.cursor,
      limit: query.limit ?? 25,
      fetch: (after, limit) =>
        listClicks(ctx.sql, ctx.merchantId, {
          retentionDays: deps.visitRetentionDays,
          affiliateId: query.affiliate_id,
          createdAfter: query.created_after,
          createdBefore: query.created_before,
          after,
          limit,
        }),
      present: presentClick,
    }),
  }));
