import { api } from '@platform/shared/api';
import { notFound } from '@platform/shared/errors';
import { isId } from '@platform/shared/ids';
import { defineOperation } from '@platform/shared/operation';
import type { AffiliatesDeps } from '../deps.ts';
import { lockAffiliate } from '../queries/tax-forms.ts';
import { apiOrigin, checkedPayoutDetails, recordPayoutDetails } from '../tax-form-store.ts';

export const putPayoutDetailsOperation = (deps: AffiliatesDeps) =>
  defineOperation(api.putPayoutDetails, async (ctx, { params, body }) => {
    if (!isId('aff', params.affiliate_id)) throw notFound('affiliate');
    const details = checkedPayoutDetails(body);
    const masked = await ctx.sql.begin(async (tx) => {
      if (!(await lockAffiliate(tx, ctx.merchantId, params.affiliate_id))) throw notFound('affiliate');
      return recordPayoutDetails(
        tx,
        deps.vaultKeys,
        ctx.merchantId,
        params.affiliate_id,
        details,
        apiOrigin(ctx.keyId),
      );
    });
    ctx.log.info('payout details stored', { affiliate_id: params.affiliate_id, method: masked.method });
    return { outcome: 'ok', body: masked };
  });
