import { api } from '@platform/shared/api';
import { keysetPage } from '@platform/shared/cursor';
import { defineOperation } from '@platform/shared/operation';
import type { EventsDeps } from '../deps.ts';
import { presentStoredEvent } from '../present.ts';
import { commissionIdsOfEvents } from '../queries/commissions.ts';
import { listEvents } from '../queries/conversion-events.ts';

/** GET /api/v1/events: the merchant's conversion events as stored, newest first, each with its commissions' ids. */
export const listEventsOperation = (deps: EventsDeps) =>
  defineOperation(api.listEvents, async (ctx, { query }) => {
    let commissionIds = new Map<string, string[]>();
    return {
      outcome: 'ok',
      body: await keysetPage({
        key: deps.cursorKey,
        scope: {
          merchantId: ctx.merchantId,
          list: 'events',
          filters: {
            affiliate_id: query.affiliate_id ?? null,
            event_type: query.event_type ?? null,
            external_id: query.external_id ?? null,
            created_after: query.created_after ?? null,
            created_before: query.created_before ?? null,
          },
        },
        cursor: query.cursor,
        limit: query.limit ?? 25,
        fetch: async (after, limit) => {
          const rows = await listEvents(ctx.sql, ctx.merchantId, {
            affiliateId: query.affiliate_id,
            eventType: query.event_type,
            externalId: query.external_id,
            createdAfter: query.created_after,
            createdBefore: query.created_before,
            after,
            limit,
          });
          // Only an attributed event can have commissions: a page of unattributed ones asks for none.
          const attributed = rows.filter((r) => r.affiliate_id !== null).map((r) => r.id);
          commissionIds = await commissionIdsOfEvents(ctx.sql, ctx.merchantId, attributed);
          return rows;
        },
        present: (row) => presentStoredEvent(row, commissionIds.get(row.id) ?? []),
      }),
    };
  });
