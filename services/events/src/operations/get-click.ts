import { api } from '@platform/shared/api';
import { notFound } from '@platform/shared/errors';
import { defineOperation } from '@platform/shared/operation';
import type { EventsDeps } from '../deps.ts';
import { presentClick } from '../present.ts';
import { findClick } from '../queries/visits.ts';

/**
 * GET /api/v1/clicks/{click_id}. A malformed id, another merchant's click and one older than the visit retention
 * (deleted, or about to be) all answer 404 alike.
 */
export const getClickOperation = (deps: EventsDeps) =>
  defineOperation(api.getClick, async (ctx, { params }) => {
    const row = await findClick(ctx.sql, ctx.merchantId, params.click_id, deps.visitRetentionDays);
    if (!row) throw notFound('click');
    return { outcome: 'ok', body: presentClick(row) };
  });
