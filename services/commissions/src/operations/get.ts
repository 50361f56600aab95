import { api } from '@platform/shared/api';
import { notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import { presentCommission } from '../present.ts';
import { clawbacksOf } from '../queries/clawbacks.ts';
import { findCommission } from '../queries/commissions.ts';

export const getCommissionOperation = () =>
  defineOperation(api.getCommission, async (ctx, { params }) => {
    // A malformed id names no row: 404, like another merchant's id.
    const row = isId('com', params.commission_id)
      ? await findCommission(ctx.sql, ctx.merchantId, params.commission_id)
      : undefined;
    if (!row) throw notFound('commission');
    // Only a voided commission can have a clawback.
    const clawback =
      row.status === 'voided' ? (await clawbacksOf(ctx.sql, ctx.merchantId, [row.id])).get(row.id) : undefined;
    return { outcome: 'ok', body: presentCommission(row, clawback) };
  });
