import { api } from '@platform/shared/api';
import { notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { presentPayout } from '../present.ts';
import { findPayout } from '../queries/payouts.ts';

export const getPayoutOperation = () =>
  defineOperation(api.getPayout, async (ctx, { params }) => {
    // A malformed id names no row: 404, like another merchant's id.
    const row = isId('po', params.payout_id) ? await findPayout(ctx.sql, ctx.merchantId, params.payout_id) : undefined;
    if (!row) throw notFound('payout');
    return { outcome: 'ok', body: presentPayout(row) };
  });
