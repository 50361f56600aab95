import { api } from '@platform/shared/api';
import { notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import type { AffiliatesDeps } from '../deps.ts';
import { presentAffiliate } from '../present.ts';
import { findAffiliate } from '../queries/affiliates.ts';

export const getAffiliateOperation = (deps: AffiliatesDeps) =>
  defineOperation(api.getAffiliate, async (ctx, { params }) => {
    // A malformed id names no row: 404, like another merchant's id.
    const row = isId('aff', params.affiliate_id)
      ? await findAffiliate(ctx.sql, ctx.merchantId, params.affiliate_id)
      : undefined;
    if (!row) throw notFound('affiliate');
    return { outcome: 'ok', body: presentAffiliate(row, deps.publicBaseUrl) };
  });
