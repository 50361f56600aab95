import { api } from '@platform/shared/api';
import { notFound } from '@platform/shared/errors';
import { defineOperation } from '@platform/shared/operation';
import { presentStoredEvent } from '../present.ts';
import { commissionIdsOfEvents } from '../queries/commissions.ts';
import { findEvent } from '../queries/conversion-events.ts';

/** GET /api/v1/events/{event_id}. A malformed id names no event: 404, like another merchant's. */
export const getEventOperation = () =>
  defineOperation(api.getEvent, async (ctx, { params }) => {
    const row = await findEvent(ctx.sql, ctx.merchantId, params.event_id);
    if (!row) throw notFound('event');
    const commissionIds =
      row.affiliate_id === null
        ? new Map<string, string[]>()
        : await commissionIdsOfEvents(ctx.sql, ctx.merchantId, [row.id]);
    return { outcome: 'ok', body: presentStoredEvent(row, commissionIds.get(row.id) ?? []) };
  });
